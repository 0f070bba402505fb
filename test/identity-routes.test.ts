/**
 * Owner identity routes over real HTTP: create, lock/unlock, wrong passphrase, confirm-backup, restore
 * (fixed vector, same-owner re-encryption, conflicts), restarts with AGT_OWNER_PASSPHRASE(_FILE), the
 * damaged-file state, the loopback-only guard, and that no secret reaches a later response, a file or
 * an event, from the built daemon. Cheap scrypt parameters (AGT_KDF_COST) keep it fast; the production
 * cost runs in identity-secrets.test.ts.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { verifyWithDid } from '../kernel/identity/did-key.js';
import { runDaemon, tempDir, type SpawnedDaemon } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';

const KNOWN_PHRASE = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const KNOWN_OWNER_DID = 'did:key:z6Mkg8Z7cTsSo5m83tXmY93GiVPBFR2fePK84cdj2nC7AjoU';
const PASSPHRASE = 'correct horse battery staple';
const LOCAL_ROUTES = [
  '/identity/create',
  '/identity/restore',
  '/identity/unlock',
  '/identity/lock',
  '/identity/confirm-backup',
];

/** Every file under `dir`, as text. */
function readAll(dir: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...readAll(path));
    else out.push([path, readFileSync(path, 'latin1')]);
  }
  return out;
}

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

/**
 * Few daemons, each a process: one without an owner for the tests that leave it so, then the create test;
 * one on a damaged owner-secrets.json, then the restore test; one started with AGT_OWNER_PASSPHRASE whose
 * data dir the restarts then reuse.
 */
let shared: Promise<SpawnedDaemon> | undefined;
const fresh = () => (shared ??= runDaemon(t));
let damaged: SpawnedDaemon | undefined;
/** Started for the file (not the test): the restore test goes on with it. */
const startDamaged = (dataDir: string) => runDaemon(t, { dataDir });
const damagedDir = tempDir(t);
const restartsDir = tempDir(t);
let firstIdentity: { ownerDid: string; runtimeDid: string } | undefined;

t.test('a fresh daemon has runtime keys and no owner', async (t) => {
  const d = await fresh();
  const res = await d.request('GET', '/identity');
  t.equal(res.status, 200);
  t.match(res.body, {
    status: 'none',
    ownerDid: null,
    storage: 'file',
    backupConfirmed: false,
    passphraseRequired: true,
  });
  t.match(res.body.runtimeDid, /^did:key:z6Mk/);
  t.type(res.body.message, 'string');
  t.equal(mode(join(d.dataDir, 'runtime-enc-key')), 0o600);
  t.equal(mode(join(d.dataDir, 'runtime-sign-key')), 0o600);
  const { publicKey } = JSON.parse(readFileSync(join(d.dataDir, 'runtime-enc-key.pub'), 'utf8'));
  t.equal(Buffer.from(publicKey, 'base64').length, 32, 'an X25519 public key');
});

t.test('lock and unlock with no identity are conflicts', async (t) => {
  const d = await fresh();
  for (const path of ['/identity/lock', '/identity/confirm-backup']) {
    const res = await d.request('POST', path);
    t.equal(res.status, 409, path);
    t.equal(res.body.identity.status, 'none');
  }
  t.equal((await d.request('POST', '/identity/unlock', { passphrase: PASSPHRASE })).status, 409);
  t.equal((await d.request('POST', '/identity/unlock', {})).status, 400, 'unlock needs a passphrase');
});

t.test('mutating identity routes are loopback-only', async (t) => {
  const d = await fresh();
  for (const path of LOCAL_ROUTES) {
    for (const header of ['x-forwarded-for', 'forwarded', 'via']) {
      const res = await d.request(
        'POST',
        path,
        { passphrase: PASSPHRASE, seedPhrase: KNOWN_PHRASE },
        { [header]: '203.0.113.9' },
      );
      t.equal(res.status, 403, `${path} with ${header}`);
      t.equal(res.body.code, 'loopback_only');
    }
  }
  t.equal((await d.request('GET', '/identity')).body.status, 'none', 'nothing was created through a proxy');
  t.equal(
    (await d.request('GET', '/identity', undefined, { 'x-forwarded-for': '203.0.113.9' })).status,
    200,
    'GET is not local-only',
  );
});
t.test('create, lock, unlock, confirm-backup; the phrase appears in the create response only', async (t) => {
  const d = await fresh();
  const log = await eventLog(t, d);
  const later: string[] = [];
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await d.request(method, path, body);
    later.push(JSON.stringify(res.body));
    return res;
  };

  const noPass = await call('POST', '/identity/create', {});
  t.equal(noPass.status, 400, 'file storage needs a passphrase');
  t.equal(noPass.body.code, 'bad_request');
  t.equal(noPass.body.identity.status, 'none');

  const created = await d.request('POST', '/identity/create', { passphrase: PASSPHRASE });
  t.equal(created.status, 201);
  const phrase: string = created.body.seedPhrase;
  t.equal(phrase.split(' ').length, 12);
  t.match(created.body.identity, {
    status: 'ready',
    storage: 'file',
    backupConfirmed: false,
    passphraseRequired: false,
  });
  const ownerDid = created.body.identity.ownerDid;
  t.match(ownerDid, /^did:key:z6Mk/);

  const again = await call('POST', '/identity/create', { passphrase: PASSPHRASE });
  t.equal(again.status, 409);
  t.equal(again.body.code, 'conflict');
  t.equal(again.body.identity.status, 'ready');

  const secretsPath = join(d.dataDir, 'owner-secrets.json');
  t.equal(mode(secretsPath), 0o600, 'owner-secrets.json is 0600');
  const stored = JSON.parse(readFileSync(secretsPath, 'utf8'));
  t.match(stored, { ownerDid, kdf: { name: 'scrypt' }, cipher: 'xsalsa20-poly1305' });

  const locked = await call('POST', '/identity/lock');
  t.equal(locked.status, 200);
  t.match(locked.body.identity, { status: 'locked', ownerDid, passphraseRequired: true });
  const agents = tempDir(t);
  const refused = await call('POST', '/agents/create', { name: 'Signed', directory: agents });
  t.match(
    refused,
    { status: 409, body: { code: 'identity_not_ready', identity: { status: 'locked' } } },
    'a locked owner signs nothing',
  );

  const wrong = await call('POST', '/identity/unlock', { passphrase: 'not it' });
  t.equal(wrong.status, 403);
  t.equal(wrong.body.code, 'wrong_password');
  t.equal(wrong.body.identity.status, 'locked');

  const unlocked = await call('POST', '/identity/unlock', { passphrase: PASSPHRASE });
  t.equal(unlocked.status, 200);
  t.match(unlocked.body.identity, { status: 'ready', ownerDid });

  // Unlocked, the owner signs again: a new agent's owner attestation verifies against the owner DID.
  const agent = (await call('POST', '/agents/create', { name: 'Signed', directory: agents })).body;
  const view = (await call('GET', `/agents/${agent.agentId}/identity`)).body;
  const attestation = view.attestations.find((item: { kind: string }) => item.kind === 'owner');
  t.equal(attestation.by, ownerDid);
  const attested = new TextEncoder().encode(
    `agt-attestation/v1\nowner\n${view.did}\n${agent.agentId}\n${attestation.created_at}`,
  );
  t.ok(
    verifyWithDid(ownerDid, attested, new Uint8Array(Buffer.from(attestation.signature, 'base64'))),
    'signed by the owner key',
  );

  const confirmed = await call('POST', '/identity/confirm-backup');
  t.equal(confirmed.status, 200);
  t.equal(confirmed.body.identity.backupConfirmed, true);
  const status = await call('GET', '/identity');
  t.match(status.body, { status: 'ready', backupConfirmed: true });

  const events = log.events;
  t.same(
    events.filter((e) => e.event_type === 'identity.changed').map((e) => e.payload),
    [{ status: 'ready' }, { status: 'locked' }, { status: 'ready' }, { status: 'ready' }],
    'identity.changed carries the status only',
  );

  // The whole phrase, the passphrase, and every run of three consecutive words of the phrase.
  const words = phrase.split(' ');
  const secrets = [phrase, PASSPHRASE, ...words.slice(0, -2).map((_, i) => words.slice(i, i + 3).join(' '))];
  const haystacks: Array<[string, string]> = [
    ...later.map((text, i) => [`response ${i}`, text] as [string, string]),
    ...events.map((e) => [`event ${e.event_type}`, JSON.stringify(e)] as [string, string]),
    ...readAll(d.dataDir),
  ];
  for (const [where, text] of haystacks) {
    for (const secret of secrets) t.notOk(text.includes(secret), `${where} holds no secret`);
  }
});

t.test('a damaged owner-secrets.json means restore-needed', async (t) => {
  const dataDir = damagedDir;
  writeFileSync(join(dataDir, 'owner-secrets.json'), '{"format":"agt-owner-secrets","version":1,', { mode: 0o600 });
  const d = (damaged = await startDamaged(dataDir));
  const status = (await d.request('GET', '/identity')).body;
  t.match(status, { status: 'restore-needed', ownerDid: null });
  t.match(status.message, /restore/);
  t.equal((await d.request('POST', '/identity/create', { passphrase: PASSPHRASE })).body.code, 'conflict');
  t.equal((await d.request('POST', '/identity/unlock', { passphrase: PASSPHRASE })).body.code, 'conflict');
  const restored = await d.request('POST', '/identity/restore', { seedPhrase: KNOWN_PHRASE, passphrase: PASSPHRASE });
  t.equal(restored.status, 200);
  t.equal(restored.body.identity.ownerDid, KNOWN_OWNER_DID);
  t.ok(
    readdirSync(dataDir).some((name) => name.startsWith('owner-secrets.json.corrupt-')),
    'the damaged file is kept aside',
  );
});

t.test('restore: invalid phrase, fixed vector, other owner, same owner with a new passphrase', async (t) => {
  // The damaged file's daemon, its owner restored from the fixed vector: a restore again re-encrypts.
  const d = damaged!;
  const bad = await d.request('POST', '/identity/restore', { seedPhrase: 'hello world', passphrase: PASSPHRASE });
  t.equal(bad.status, 400);
  t.equal(bad.body.code, 'bad_request');
  t.notOk(JSON.stringify(bad.body).includes('hello world'), 'the phrase is not echoed');

  const restored = await d.request('POST', '/identity/restore', { seedPhrase: KNOWN_PHRASE, passphrase: PASSPHRASE });
  t.equal(restored.status, 200);
  t.match(restored.body.identity, { status: 'ready', ownerDid: KNOWN_OWNER_DID, backupConfirmed: true });
  t.notOk('seedPhrase' in restored.body);

  const other = await d.request('POST', '/identity/restore', {
    seedPhrase: 'legal winner thank year wave sausage worth useful legal winner thank yellow',
    passphrase: PASSPHRASE,
  });
  t.equal(other.status, 409);
  t.equal(other.body.code, 'conflict');
  t.equal(other.body.identity.ownerDid, KNOWN_OWNER_DID);

  await d.request('POST', '/identity/lock');
  const same = await d.request('POST', '/identity/restore', {
    seedPhrase: `  ${KNOWN_PHRASE.toUpperCase()} `,
    passphrase: 'a new one',
  });
  t.equal(same.status, 200, 'the owner can reset a forgotten passphrase with the phrase');
  t.equal(same.body.identity.status, 'ready');
  await d.request('POST', '/identity/lock');
  t.equal(
    (await d.request('POST', '/identity/unlock', { passphrase: PASSPHRASE })).status,
    403,
    'old passphrase is gone',
  );
  t.equal((await d.request('POST', '/identity/unlock', { passphrase: 'a new one' })).status, 200);
});

t.test('with AGT_OWNER_PASSPHRASE, create needs no body passphrase', async (t) => {
  const d = await runDaemon(t, { dataDir: restartsDir, env: { AGT_OWNER_PASSPHRASE: PASSPHRASE } });
  t.equal((await d.request('GET', '/identity')).body.passphraseRequired, false);
  const created = await d.request('POST', '/identity/create');
  t.equal(created.status, 201);
  firstIdentity = created.body.identity;
  await d.request('POST', '/identity/lock');
  t.equal((await d.request('POST', '/identity/unlock', { passphrase: PASSPHRASE })).status, 200);
  t.equal(await d.stop(), 0, 'stopped');
});

t.test('restarts: locked without a passphrase, unlocked by AGT_OWNER_PASSPHRASE or its file', async (t) => {
  // The data dir of the test before: an owner made under AGT_OWNER_PASSPHRASE.
  const dataDir = restartsDir;
  const { ownerDid, runtimeDid } = firstIdentity!;

  const plain = await runDaemon(t, { dataDir });
  t.match((await plain.request('GET', '/identity')).body, {
    status: 'locked',
    ownerDid,
    runtimeDid,
    passphraseRequired: true,
  });
  t.equal(await plain.stop(), 0, 'stopped');

  const withEnv = await runDaemon(t, { dataDir, env: { AGT_OWNER_PASSPHRASE: PASSPHRASE } });
  t.match(
    (await withEnv.request('GET', '/identity')).body,
    { status: 'ready', ownerDid, runtimeDid },
    'runtime keys persist',
  );
  t.equal(await withEnv.stop(), 0, 'stopped');

  const passFile = join(tempDir(t), 'passphrase');
  writeFileSync(passFile, `${PASSPHRASE}\n`, { mode: 0o600 });
  const withFile = await runDaemon(t, { dataDir, env: { AGT_OWNER_PASSPHRASE_FILE: passFile } });
  t.equal((await withFile.request('GET', '/identity')).body.status, 'ready');
  t.equal(await withFile.stop(), 0, 'stopped');

  const missingFile = await runDaemon(t, {
    dataDir,
    env: { AGT_OWNER_PASSPHRASE_FILE: join(dataDir, 'no-such-file') },
  });
  const missingStatus = (await missingFile.request('GET', '/identity')).body;
  t.equal(missingStatus.status, 'locked');
  t.match(missingStatus.message, /AGT_OWNER_PASSPHRASE_FILE cannot be read/);
  t.equal(await missingFile.stop(), 0, 'stopped');

  const wrongEnv = await runDaemon(t, { dataDir, env: { AGT_OWNER_PASSPHRASE: 'not-the-passphrase-42' } });
  const status = (await wrongEnv.request('GET', '/identity')).body;
  t.equal(status.status, 'locked');
  t.match(status.message, /AGT_OWNER_PASSPHRASE did not unlock/);
  t.notOk(JSON.stringify(status).includes('not-the-passphrase-42'), 'no passphrase in the status');
  t.equal(await wrongEnv.stop(), 0, 'stopped');
});
