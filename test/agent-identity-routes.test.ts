/**
 * Agent identity over real HTTP: the DID and attestations a created agent carries verify independently
 * (owner attestation by the owner DID, runtime stamp by the runtime DID), the agent's own key signs for
 * its DID, a tampered attestation shows as invalid, regenerate re-keys (and refuses while the owner is
 * not ready), files without an identity are `unclaimed`, and no response carries key material.
 */
import t from 'tap';
import type { UmbilicalEvent } from '../contracts/events.js';
import { ATTESTATIONS_KEY } from '../kernel/agent-identity/service.js';
import { verifyWithDid } from '../kernel/identity/did-key.js';
import { createAgentFile } from './helpers/agent-file.js';
import { bootDaemon, tempDir } from './helpers/daemon.js';


const message = (kind: string, did: string, agentId: string, createdAt: number) =>
  new TextEncoder().encode(`agt-attestation/v1\n${kind}\n${did}\n${agentId}\n${createdAt}`);

t.test('a created agent has a DID, an owner attestation and a runtime stamp that verify', async (t) => {
  const dir = tempDir(t);
  const d = await bootDaemon(t);
  const owner = (await d.request('POST', '/identity/create', { passphrase: 'owner passphrase' })).body.identity;
  const created = (await d.request('POST', '/agents/create', { name: 'Signed', directory: dir })).body;
  const events: UmbilicalEvent[] = [];
  t.teardown(d.daemon.kernel.bus.subscribe((event) => events.push(event)));

  const res = await d.request('GET', `/agents/${created.agentId}/identity`);
  t.equal(res.status, 200);
  const view = res.body;
  t.same(Object.keys(view).sort(), ['agentId', 'attestations', 'did', 'ownerDid', 'ownerIsYou', 'runtimeDid', 'runtimeIsThis', 'scenario']);
  t.match(view, { agentId: created.agentId, did: created.did, ownerDid: owner.ownerDid, ownerIsYou: true, scenario: 'mine', runtimeDid: owner.runtimeDid, runtimeIsThis: true });
  t.same(view.attestations.map((item: { kind: string }) => item.kind), ['owner', 'runtime']);
  for (const item of view.attestations) {
    t.same(Object.keys(item).sort(), ['by', 'created_at', 'kind', 'signature', 'valid'], 'signatures only, no key material');
    t.equal(item.valid, true);
    const signature = new Uint8Array(Buffer.from(item.signature, 'base64'));
    t.ok(verifyWithDid(item.by, message(item.kind, view.did, created.agentId, item.created_at), signature), `${item.kind} signature verifies on its own`);
    t.notOk(verifyWithDid(item.by, message(item.kind, view.did, 'agt-other', item.created_at), signature), 'bound to the agent id');
  }

  const agent = d.daemon.kernel.registry.resolve(created.agentId);
  const payload = new TextEncoder().encode('hello from the agent');
  const signature = d.daemon.kernel.agentIdentity.sign(agent, payload);
  t.ok(signature && verifyWithDid(view.did, payload, signature), "the sealed secret key is the DID's key");

  // Tampering: an attestation moved to another subject no longer verifies.
  const records = JSON.parse(agent.file.identity.get(ATTESTATIONS_KEY)!.toString('utf8'));
  agent.file.identity.put(ATTESTATIONS_KEY, JSON.stringify(records.map((record: { created_at: number }) => ({ ...record, created_at: record.created_at + 1 }))));
  const tampered = (await d.request('GET', `/agents/${created.agentId}/identity`)).body;
  t.match(tampered, { scenario: 'invalid', ownerIsYou: false, runtimeIsThis: false });
  t.same(tampered.attestations.map((item: { valid: boolean }) => item.valid), [false, false]);

  const regenerated = await d.request('POST', `/agents/${created.agentId}/identity/regenerate`);
  t.equal(regenerated.status, 200);
  t.not(regenerated.body.did, view.did, 'a new key pair');
  t.match(regenerated.body, { scenario: 'mine', ownerIsYou: true, runtimeIsThis: true });
  t.same(regenerated.body.attestations.map((item: { valid: boolean }) => item.valid), [true, true]);
  const newSignature = d.daemon.kernel.agentIdentity.sign(agent, payload)!;
  t.ok(verifyWithDid(regenerated.body.did, payload, newSignature));
  t.notOk(verifyWithDid(view.did, payload, newSignature), 'the old key is gone');
  t.same(events.filter((event) => event.event_type === 'agent.identity.changed').map((event) => event.payload), [{ did: regenerated.body.did }]);
  t.equal((await d.request('GET', `/agents/${created.agentId}/logs?event=identity_regenerated`)).body.logs.length, 1);

  await d.request('POST', '/identity/lock');
  const notReady = await d.request('POST', `/agents/${created.agentId}/identity/regenerate`);
  t.equal(notReady.status, 409);
  t.equal(notReady.body.code, 'identity_not_ready');
  t.equal(notReady.body.identity.status, 'locked');
  t.equal((await d.request('GET', `/agents/${created.agentId}/identity`)).body.scenario, 'mine', 'reads work while the owner is locked');

  const secretKeys = (await d.request('GET', `/agents/${created.agentId}/identity`)).body;
  t.notOk(JSON.stringify(secretKeys).match(/secret|seed|"key"/i), 'no key material fields');
});

t.test('a file without an identity is unclaimed until regenerate gives it one', async (t) => {
  const dir = tempDir(t);
  const d = await bootDaemon(t);
  await d.request('POST', '/identity/create', { passphrase: 'owner passphrase' });
  const filePath = await createAgentFile(dir, { name: 'bare' });
  const review = await d.request('GET', `/agents/review?filePath=${encodeURIComponent(filePath)}`);
  t.same(review.body.summary.identity, { agentDid: null, fileOwnerDid: null, ownerIsYou: false, scenario: 'unclaimed' });
  const loaded = (await d.request('POST', '/agents/load', { filePath })).body;
  t.notOk((await d.request('GET', `/agents/${loaded.id}/status`)).body.degraded, 'no envelope is not a locked envelope');
  t.match((await d.request('GET', `/agents/${loaded.id}/identity`)).body, { did: null, ownerDid: null, scenario: 'unclaimed', runtimeDid: null, attestations: [] });
  t.match((await d.request('GET', `/agents/${loaded.id}/credentials`)).body, { locked: false, credentials: [] });

  const regenerated = await d.request('POST', `/agents/${loaded.id}/identity/regenerate`);
  t.equal(regenerated.status, 200);
  t.match(regenerated.body, { scenario: 'mine', did: /^did:key:z6Mk/ });
  t.equal((await d.request('PUT', `/agents/${loaded.id}/credentials/provider:x`, { value: 'v' })).status, 200, 'the envelope made on the way seals credentials');
  t.equal(await d.daemon.kernel.agents.readCredential(loaded.id, 'provider:x'), 'v');
  const after = await d.request('GET', `/agents/review?filePath=${encodeURIComponent(filePath)}`);
  t.match(after.body.summary.identity, { agentDid: regenerated.body.did, ownerIsYou: true, scenario: 'mine' });
  t.equal((await d.request('GET', '/agents/agt-missing/identity')).status, 404);
});
