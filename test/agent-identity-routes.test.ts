/**
 * Agent identity over real HTTP: the DID and attestations a created agent carries verify independently
 * (owner attestation by the owner DID, runtime stamp by the runtime DID), the agent's own key signs for
 * its DID, a tampered attestation shows as invalid, regenerate re-keys (and refuses while the owner is
 * not ready), files without an identity are `unclaimed`, and no response carries key material.
 */
import Database from 'libsql';
import t from 'tap';
import { canonicalJson, parseSignature } from '../contracts/agent-keys.js';
import { ATTESTATIONS_KEY } from '../kernel/agent-identity/service.js';
import { verifyWithDid } from '../kernel/identity/did-key.js';
import { createAgentFile } from './helpers/agent-file.js';
import { credentialProbe } from './helpers/credential-probe.js';
import { runDaemon, tempDir, type DaemonClient, type SpawnedDaemon } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';

/** One daemon for the file; each test makes agents of its own. */
let shared: Promise<SpawnedDaemon> | undefined;
const daemon = () => (shared ??= runDaemon(t));

/**
 * The agent's signed mesh card (the mesh extension signs it with the agent's own key, as every message
 * it sends): its signature checked against `did` over the card's canonical JSON without endpoints and
 * signature. Undefined when the card carries no signature.
 */
async function cardSignedBy(d: DaemonClient, agentId: string, did: string): Promise<boolean | undefined> {
  const network = (await d.request('GET', '/network')).body;
  const cardUrl = network.agents.find((agent: { agentId: string }) => agent.agentId === agentId)?.cardUrl;
  if (!cardUrl) throw new Error(`no card URL for ${agentId}: ${JSON.stringify(network)}`);
  const {
    endpoints: _endpoints,
    signature,
    ...unsigned
  } = (await (await fetch(cardUrl)).json()) as Record<string, unknown>;
  const bytes = parseSignature(signature);
  return bytes && verifyWithDid(did, new TextEncoder().encode(canonicalJson(unsigned)), bytes);
}

/** Replaces the attestations row of a loaded agent's file, as another program writing the file would. */
function writeAttestations(filePath: string, change: (records: Array<{ created_at: number }>) => unknown): void {
  const db = new Database(filePath, { timeout: 5000 });
  try {
    const row = db.prepare('SELECT value FROM agt_identity WHERE key = ?').get(ATTESTATIONS_KEY) as { value: Buffer };
    const next = change(JSON.parse(Buffer.from(row.value).toString('utf8')));
    db.prepare('UPDATE agt_identity SET value = ? WHERE key = ?').run(
      Buffer.from(JSON.stringify(next)),
      ATTESTATIONS_KEY,
    );
  } finally {
    db.close();
  }
}

const message = (kind: string, did: string, agentId: string, createdAt: number) =>
  new TextEncoder().encode(`agt-attestation/v1\n${kind}\n${did}\n${agentId}\n${createdAt}`);

t.test('a created agent has a DID, an owner attestation and a runtime stamp that verify', async (t) => {
  const dir = tempDir(t);
  const d = await daemon();
  const owner = (await d.request('POST', '/identity/create', { passphrase: 'owner passphrase' })).body.identity;
  const created = (await d.request('POST', '/agents/create', { name: 'Signed', directory: dir })).body;
  const log = await eventLog(t, d);

  const res = await d.request('GET', `/agents/${created.agentId}/identity`);
  t.equal(res.status, 200);
  const view = res.body;
  t.same(Object.keys(view).sort(), [
    'agentId',
    'attestations',
    'did',
    'ownerDid',
    'ownerIsYou',
    'runtimeDid',
    'runtimeIsThis',
    'scenario',
  ]);
  t.match(view, {
    agentId: created.agentId,
    did: created.did,
    ownerDid: owner.ownerDid,
    ownerIsYou: true,
    scenario: 'mine',
    runtimeDid: owner.runtimeDid,
    runtimeIsThis: true,
  });
  t.same(
    view.attestations.map((item: { kind: string }) => item.kind),
    ['owner', 'runtime'],
  );
  for (const item of view.attestations) {
    t.same(
      Object.keys(item).sort(),
      ['by', 'created_at', 'kind', 'signature', 'valid'],
      'signatures only, no key material',
    );
    t.equal(item.valid, true);
    const signature = new Uint8Array(Buffer.from(item.signature, 'base64'));
    t.ok(
      verifyWithDid(item.by, message(item.kind, view.did, created.agentId, item.created_at), signature),
      `${item.kind} signature verifies on its own`,
    );
    t.notOk(
      verifyWithDid(item.by, message(item.kind, view.did, 'agt-other', item.created_at), signature),
      'bound to the agent id',
    );
  }

  t.equal(await cardSignedBy(d, created.agentId, view.did), true, "the sealed secret key is the DID's key");

  // Tampering: an attestation moved to another subject no longer verifies.
  writeAttestations(created.filePath, (records) =>
    records.map((record) => ({ ...record, created_at: record.created_at + 1 })),
  );
  const tampered = (await d.request('GET', `/agents/${created.agentId}/identity`)).body;
  t.match(tampered, { scenario: 'invalid', ownerIsYou: false, runtimeIsThis: false });
  t.same(
    tampered.attestations.map((item: { valid: boolean }) => item.valid),
    [false, false],
  );

  const regenerated = await d.request('POST', `/agents/${created.agentId}/identity/regenerate`);
  t.equal(regenerated.status, 200);
  t.not(regenerated.body.did, view.did, 'a new key pair');
  t.match(regenerated.body, { scenario: 'mine', ownerIsYou: true, runtimeIsThis: true });
  t.same(
    regenerated.body.attestations.map((item: { valid: boolean }) => item.valid),
    [true, true],
  );
  t.equal(await cardSignedBy(d, created.agentId, regenerated.body.did), true, 'signed with the new key');
  t.equal(await cardSignedBy(d, created.agentId, view.did), false, 'the old key is gone');
  await log.waitFor((event) => event.event_type === 'agent.identity.changed', 'agent.identity.changed');
  t.same(
    log.events.filter((event) => event.event_type === 'agent.identity.changed').map((event) => event.payload),
    [{ did: regenerated.body.did }],
  );
  t.equal((await d.request('GET', `/agents/${created.agentId}/logs?event=identity_regenerated`)).body.logs.length, 1);

  await d.request('POST', '/identity/lock');
  const notReady = await d.request('POST', `/agents/${created.agentId}/identity/regenerate`);
  t.equal(notReady.status, 409);
  t.equal(notReady.body.code, 'identity_not_ready');
  t.equal(notReady.body.identity.status, 'locked');
  t.equal(
    (await d.request('GET', `/agents/${created.agentId}/identity`)).body.scenario,
    'mine',
    'reads work while the owner is locked',
  );

  const secretKeys = (await d.request('GET', `/agents/${created.agentId}/identity`)).body;
  t.notOk(JSON.stringify(secretKeys).match(/secret|seed|"key"/i), 'no key material fields');
});

t.test('a file without an identity is unclaimed until regenerate gives it one', async (t) => {
  const dir = tempDir(t);
  const d = await daemon();
  t.equal(
    (await d.request('POST', '/identity/unlock', { passphrase: 'owner passphrase' })).status,
    200,
    'the owner (made by the test before) unlocked',
  );
  const readCredential = await credentialProbe(t);
  const filePath = await createAgentFile(dir, { name: 'bare' });
  const review = await d.request('GET', `/agents/review?filePath=${encodeURIComponent(filePath)}`);
  t.same(review.body.summary.identity, {
    agentDid: null,
    fileOwnerDid: null,
    ownerIsYou: false,
    scenario: 'unclaimed',
  });
  const loaded = (await d.request('POST', '/agents/load', { filePath })).body;
  t.notOk(
    (await d.request('GET', `/agents/${loaded.id}/status`)).body.degraded,
    'no envelope is not a locked envelope',
  );
  t.match((await d.request('GET', `/agents/${loaded.id}/identity`)).body, {
    did: null,
    ownerDid: null,
    scenario: 'unclaimed',
    runtimeDid: null,
    attestations: [],
  });
  t.match((await d.request('GET', `/agents/${loaded.id}/credentials`)).body, { locked: false, credentials: [] });

  const regenerated = await d.request('POST', `/agents/${loaded.id}/identity/regenerate`);
  t.equal(regenerated.status, 200);
  t.match(regenerated.body, { scenario: 'mine', did: /^did:key:z6Mk/ });
  t.equal(
    (await d.request('PUT', `/agents/${loaded.id}/credentials/provider:x`, { value: 'v' })).status,
    200,
    'the envelope made on the way seals credentials',
  );
  t.equal(await readCredential(d, loaded.id, 'provider:x'), 'v');
  const after = await d.request('GET', `/agents/review?filePath=${encodeURIComponent(filePath)}`);
  t.match(after.body.summary.identity, { agentDid: regenerated.body.did, ownerIsYou: true, scenario: 'mine' });
  t.equal((await d.request('GET', '/agents/agt-missing/identity')).status, 404);
});
