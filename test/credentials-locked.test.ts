/**
 * Locked credentials envelopes: a password-protected agent reloaded without its password, and a file
 * from another installation whose owner identity is locked (then unlocked) or foreign. Covers 409
 * `credentials_locked`, `replace: true` with the `credential_replaced` log row and automatic sealing,
 * the `CREDENTIALS_LOCKED` degraded flag with its `agent.degraded` events, unlock/lock and the
 * password-protection flag autostart reads. From the built daemon; credentials are read as the providers
 * extension sends them (test/helpers/credential-probe.ts). The minute re-check is in
 * credentials-locked-internals.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import t from 'tap';
import type { UmbilicalEvent } from '../contracts/events.js';
import { FileReader } from '../kernel/credentials/file-reader.js';
import { credentialProbe } from './helpers/credential-probe.js';
import { runDaemon, tempDir, type DaemonClient, type SpawnedDaemon } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';

const KNOWN_PHRASE = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const PASSPHRASE = 'owner passphrase';

const degradedEvents = (events: UmbilicalEvent[], agentId: string) =>
  events
    .filter((event) => event.event_type === 'agent.degraded' && event.agent_id === agentId)
    .map((event) => event.payload);

const status = async (d: DaemonClient, id: string) => (await d.request('GET', `/agents/${id}/status`)).body;

const rawFile = (path: string) =>
  [path, `${path}-wal`]
    .filter(existsSync)
    .map((file) => readFileSync(file).toString('latin1'))
    .join('');

/** The first test's daemon; the second uses it as the installation of another owner. */
let first: Promise<SpawnedDaemon> | undefined;
const daemon = () => (first ??= runDaemon(t));

t.test('password-protected agent: locked after reload, replace, unlock, lock', async (t) => {
  const dir = tempDir(t);
  const d = await daemon();
  const readCredential = await credentialProbe(t);
  await d.request('POST', '/identity/create', { passphrase: PASSPHRASE });
  const plain = (await d.request('POST', '/agents/create', { name: 'Plain', directory: dir })).body;
  const created = await d.request('POST', '/agents/create', {
    name: 'Vault',
    directory: dir,
    password: 'vault password',
  });
  t.equal(created.status, 201);
  const id: string = created.body.agentId;
  const filePath: string = created.body.filePath;
  t.notOk((await status(d, id)).degraded, 'its creator gave the password: unlocked');
  t.equal((await d.request('PUT', `/agents/${id}/credentials/provider:openai`, { value: 'old-value-1' })).status, 200);

  const reader = new FileReader();
  t.teardown(() => reader.close());
  t.equal((await reader.summary(filePath)).passwordProtected, true, 'autostart sees the protection');
  t.equal((await reader.summary(plain.filePath)).passwordProtected, false);
  t.equal((await d.request('GET', `/agents/${id}/credentials`)).body.passwordProtected, true, 'the daemon says so too');
  t.equal(
    await readCredential(d, id, 'provider:openai'),
    'old-value-1',
    'readable while its creator holds the password',
  );

  const log = await eventLog(t, d);
  const events = log.events;
  await d.request('POST', `/agents/${id}/stop`);
  t.equal((await d.request('POST', '/agents/load', { filePath })).status, 200);
  t.equal((await status(d, id)).degraded, 'CREDENTIALS_LOCKED', 'reloaded without the password: degraded');
  await log.waitFor((event) => event.event_type === 'agent.degraded' && event.agent_id === id, 'agent.degraded');
  t.same(degradedEvents(events, id), [{ degraded: 'CREDENTIALS_LOCKED' }]);
  const list = await d.request('GET', `/agents/${id}/credentials`);
  t.match(list.body, {
    locked: true,
    reason: 'password',
    passwordProtected: true,
    credentials: [{ name: 'provider:openai', sealed: true, locked: true }],
  });
  t.equal(await readCredential(d, id, 'provider:openai'), undefined, 'locked: nothing to read');

  const refused = await d.request('PUT', `/agents/${id}/credentials/provider:openai`, { value: 'new-value-2' });
  t.equal(refused.status, 409);
  t.match(refused.body, { code: 'credentials_locked', agentId: id, reason: 'password' });
  t.equal(
    (await d.request('PUT', `/agents/${id}/credentials/provider:new`, { value: 'x', replace: false })).body.code,
    'credentials_locked',
    'new names too',
  );

  const replaced = await d.request('PUT', `/agents/${id}/credentials/provider:openai`, {
    value: 'new-value-2',
    replace: true,
  });
  t.equal(replaced.status, 200);
  t.match(replaced.body.credential, { set: true, sealed: false, locked: true, length: 'new-value-2'.length });
  const logRows = (await d.request('GET', `/agents/${id}/logs?event=credential_replaced`)).body.logs;
  t.equal(logRows.length, 1, 'credential_replaced logged');
  t.match(logRows[0], { level: 'warn', origin: 'kernel', event: 'credential_replaced' });
  t.notOk(JSON.stringify(logRows).includes('new-value-2'), 'the log row names the credential, not the value');
  t.notOk(rawFile(filePath).includes('new-value-2'), 'the pending value is not plaintext on disk');
  t.equal(await readCredential(d, id, 'provider:openai'), undefined, 'pending values are not readable while locked');

  const wrong = await d.request('POST', `/agents/${id}/credentials/unlock`, { password: 'not it' });
  t.equal(wrong.status, 403);
  t.equal(wrong.body.code, 'wrong_password');
  t.equal((await status(d, id)).degraded, 'CREDENTIALS_LOCKED', 'still degraded');

  const unlocked = await d.request('POST', `/agents/${id}/credentials/unlock`, { password: 'vault password' });
  t.same(unlocked.body, { agentId: id, locked: false, reason: null, passwordProtected: true });
  t.notOk((await status(d, id)).degraded, 'cleared');
  await log.waitFor(
    (event) =>
      event.event_type === 'agent.degraded' &&
      event.agent_id === id &&
      (event.payload as { degraded: unknown }).degraded === null,
    'agent.degraded cleared',
  );
  t.same(degradedEvents(events, id), [{ degraded: 'CREDENTIALS_LOCKED' }, { degraded: null }], 'cleared with an event');
  t.match((await d.request('GET', `/agents/${id}/credentials/provider:openai`)).body.credential, {
    sealed: true,
    locked: false,
  });
  t.equal(
    await readCredential(d, id, 'provider:openai'),
    'new-value-2',
    'the replacement was sealed; the old value is gone',
  );
  await log.waitFor(
    (event) => event.event_type === 'credential.changed' && (event.payload as { action: string }).action === 'sealed',
    'credential.changed sealed',
  );

  const locked = await d.request('POST', `/agents/${id}/credentials/lock`);
  t.match(locked.body, { locked: true, reason: 'password' });
  t.equal((await status(d, id)).degraded, 'CREDENTIALS_LOCKED');

  t.match(await d.request('POST', `/agents/${plain.agentId}/credentials/lock`), {
    status: 409,
    body: { code: 'conflict' },
  });
  t.match(await d.request('POST', `/agents/${plain.agentId}/credentials/unlock`, { password: 'x' }), {
    status: 409,
    body: { code: 'conflict' },
  });
  t.notOk((await status(d, plain.agentId)).degraded, 'an envelope made here never locks without a password');

  // An identity change re-checks: it does not unlock a password.
  const before = degradedEvents(log.events, id).length;
  await d.request('POST', '/identity/lock');
  await d.request('POST', '/identity/unlock', { passphrase: PASSPHRASE });
  t.equal((await status(d, id)).degraded, 'CREDENTIALS_LOCKED');
  t.equal(degradedEvents(log.events, id).length, before, 'identity changes do not unlock a password, silently');
});

t.test('a file from another installation: owner-locked, then unlocked by the owner; foreign owner', async (t) => {
  const dir = tempDir(t);
  // Installation A: the owner creates an agent with a credential, then lets go of the file.
  const readCredential = await credentialProbe(t);
  const a = await runDaemon(t);
  await a.request('POST', '/identity/restore', { seedPhrase: KNOWN_PHRASE, passphrase: PASSPHRASE });
  const created = (await a.request('POST', '/agents/create', { name: 'Traveller', directory: dir })).body;
  await a.request('PUT', `/agents/${created.agentId}/credentials/provider:openai`, { value: 'travelling-secret' });
  await a.request('POST', `/agents/${created.agentId}/stop`);

  // Installation B: same owner, other runtime keys; the owner identity is locked when the file loads.
  const b = await runDaemon(t);
  await b.request('POST', '/identity/restore', { seedPhrase: KNOWN_PHRASE, passphrase: PASSPHRASE });
  await b.request('POST', '/identity/lock');
  const log = await eventLog(t, b);
  const events = log.events;
  t.equal((await b.request('POST', '/agents/load', { filePath: created.filePath })).status, 200);
  t.equal((await status(b, created.agentId)).degraded, 'CREDENTIALS_LOCKED');
  t.match((await b.request('GET', `/agents/${created.agentId}/credentials`)).body, {
    locked: true,
    reason: 'owner_locked',
  });
  t.equal(await readCredential(b, created.agentId, 'provider:openai'), undefined);
  t.equal((await b.request('GET', `/agents/${created.agentId}/identity`)).body.scenario, 'mine', 'same owner DID');
  t.equal(
    (await b.request('GET', `/agents/${created.agentId}/identity`)).body.runtimeIsThis,
    false,
    'stamped by the other runtime',
  );

  await b.request('POST', '/identity/unlock', { passphrase: PASSPHRASE });
  t.notOk((await status(b, created.agentId)).degraded, 'the identity change re-checked it');
  await log.waitFor(
    (event) => event.event_type === 'agent.degraded' && (event.payload as { degraded: unknown }).degraded === null,
    'agent.degraded cleared',
  );
  t.same(degradedEvents(events, created.agentId), [{ degraded: 'CREDENTIALS_LOCKED' }, { degraded: null }]);
  t.equal(await readCredential(b, created.agentId, 'provider:openai'), 'travelling-secret');

  await b.request('POST', '/identity/lock');
  t.equal(
    await readCredential(b, created.agentId, 'provider:openai'),
    'travelling-secret',
    'adopted: a wrap for this runtime was added',
  );
  t.notOk((await status(b, created.agentId)).degraded);
  await b.request('POST', `/agents/${created.agentId}/stop`);

  // Installation C (the first test's): another owner. Nothing fits: foreign, and stays locked whatever its identity
  // does.
  const c = await daemon();
  t.equal((await c.request('GET', '/identity')).body.status, 'ready', 'its own owner');
  const review = await c.request('GET', `/agents/review?filePath=${encodeURIComponent(created.filePath)}`);
  t.match(review.body.summary.identity, { ownerIsYou: false, scenario: 'foreign', agentDid: created.did });
  await c.request('POST', '/agents/load', { filePath: created.filePath });
  t.match((await c.request('GET', `/agents/${created.agentId}/credentials`)).body, { locked: true, reason: 'foreign' });
  t.equal((await status(c, created.agentId)).degraded, 'CREDENTIALS_LOCKED');
  t.match(await c.request('POST', `/agents/${created.agentId}/identity/regenerate`), {
    status: 409,
    body: { code: 'credentials_locked' },
  });
});
