/**
 * Credentials at rest and on the wire: values are sealed in the agent file (the raw bytes never hold
 * them), routes return metadata only, and no value or password reaches a response, an agent log row, an
 * event or the daemon's own (debug) log. A value is used for the agent id it belongs to only (read as the
 * providers extension sends it, test/helpers/credential-probe.ts). From the built daemon.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { credentialProbe } from './helpers/credential-probe.js';
import { runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';

const SECRET = `sk-live-${randomBytes(12).toString('hex')}`;
const OTHER_SECRET = `sk-other-${randomBytes(12).toString('hex')}`;
const AGENT_PASSWORD = `agent-pw-${randomBytes(6).toString('hex')}`;
const OWNER_PASSPHRASE = `owner-pp-${randomBytes(6).toString('hex')}`;
const SECRETS = [SECRET, OTHER_SECRET, AGENT_PASSWORD, OWNER_PASSPHRASE];

/** Every form a leaked value could take in text. */
const forms = (value: string) => [value, Buffer.from(value).toString('base64'), Buffer.from(value).toString('hex')];

function assertNoSecret(t: Test, text: string, where: string): void {
  const leaked = SECRETS.flatMap(forms).filter((form) => text.includes(form));
  t.same(leaked, [], `no secret in ${where}`);
}

/** The agent file and its WAL, as bytes read as text. */
function rawFile(path: string): string {
  return [path, `${path}-wal`]
    .filter(existsSync)
    .map((file) => readFileSync(file).toString('latin1'))
    .join('');
}

t.test('credentials are sealed, listed as metadata, scoped per agent, and never leak', async (t) => {
  const dir = tempDir(t);
  const d = await runDaemon(t, { env: { AGT_LOG_LEVEL: 'debug' } });
  const log = await eventLog(t, d);
  const readCredential = await credentialProbe(t);
  const responses: string[] = [];
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await d.request(method, path, body);
    responses.push(JSON.stringify(res.body));
    return res;
  };

  t.equal((await call('POST', '/identity/create', { passphrase: OWNER_PASSPHRASE })).status, 201);
  const a = (await call('POST', '/agents/create', { name: 'Alpha', directory: dir })).body;
  const b = (await call('POST', '/agents/create', { name: 'Beta', directory: dir, password: AGENT_PASSWORD })).body;

  const put = await call('PUT', `/agents/${a.agentId}/credentials/provider:openai`, { value: SECRET });
  t.equal(put.status, 200);
  t.same(put.body, {
    agentId: a.agentId,
    credential: {
      name: 'provider:openai',
      set: true,
      sealed: true,
      locked: false,
      length: SECRET.length,
      updated_at: put.body.credential.updated_at,
    },
  });
  t.equal(
    (await call('PUT', `/agents/${b.agentId}/credentials/provider:openai`, { value: OTHER_SECRET })).status,
    200,
    'a password agent unlocked by its creator',
  );

  const list = await call('GET', `/agents/${a.agentId}/credentials`);
  t.same(list.body, {
    agentId: a.agentId,
    locked: false,
    reason: null,
    passwordProtected: false,
    credentials: [
      {
        name: 'provider:openai',
        set: true,
        sealed: true,
        locked: false,
        length: SECRET.length,
        updated_at: put.body.credential.updated_at,
      },
    ],
  });
  t.match((await call('GET', `/agents/${a.agentId}/credentials/provider:openai`)).body.credential, {
    set: true,
    sealed: true,
  });
  t.match((await call('GET', `/agents/${a.agentId}/credentials/channel:none`)).body.credential, {
    name: 'channel:none',
    set: false,
    length: 0,
    updated_at: null,
  });
  t.equal((await call('GET', `/agents/${b.agentId}/credentials`)).body.passwordProtected, true);

  t.equal(await readCredential(d, a.agentId, 'provider:openai'), SECRET, 'the owning agent id reads its value');
  t.equal(
    await readCredential(d, b.agentId, 'provider:openai'),
    OTHER_SECRET,
    'each agent has its own value under one name',
  );
  t.equal(await readCredential(d, b.agentId, 'provider:none'), undefined);
  t.equal((await call('POST', '/agents/agt-does-not-exist/providers/openai/check')).status, 404);
  t.equal(
    (await call('POST', `/agents/${a.agentId.toUpperCase()}/providers/openai/check`)).status,
    404,
    'only the exact agent id',
  );

  t.equal(
    (await call('PUT', `/agents/${a.agentId}/credentials/bad%20name`, { value: 'x' })).status,
    400,
    'name pattern',
  );
  t.equal((await call('PUT', `/agents/${a.agentId}/credentials/provider:x`, { value: '' })).status, 400, 'empty value');
  t.equal(
    (await call('PUT', `/agents/${a.agentId}/credentials/provider:x`, { value: 'x', extra: 1 })).status,
    400,
    'unknown field',
  );
  t.equal((await call('GET', '/agents/agt-nope/credentials')).status, 404);

  // On disk: while loaded (WAL) and after unload (checkpointed into the .agt).
  assertNoSecret(t, rawFile(a.filePath) + rawFile(b.filePath), 'the loaded agent files');
  t.equal((await call('POST', `/agents/${a.agentId}/stop`)).status, 200);
  t.equal((await call('POST', `/agents/${b.agentId}/stop`)).status, 200);
  assertNoSecret(t, rawFile(a.filePath) + rawFile(b.filePath), 'the closed agent files');
  t.ok(rawFile(a.filePath).includes('provider:openai'), 'the name is stored in clear (metadata)');

  await call('POST', '/agents/load', { filePath: a.filePath });
  t.equal(
    await readCredential(d, a.agentId, 'provider:openai'),
    SECRET,
    'readable again after a reload (runtime wrap)',
  );
  const logs = await call('GET', `/agents/${a.agentId}/logs`);
  t.ok(
    logs.body.logs.some((row: { event: string }) => row.event === 'credential_set'),
    'set is logged (name only)',
  );

  t.same((await call('DELETE', `/agents/${a.agentId}/credentials/provider:openai`)).body, {
    agentId: a.agentId,
    success: true,
  });
  t.same((await call('DELETE', `/agents/${a.agentId}/credentials/provider:openai`)).body, {
    agentId: a.agentId,
    success: false,
  });
  t.equal(await readCredential(d, a.agentId, 'provider:openai'), undefined);
  t.same((await call('GET', `/agents/${a.agentId}/credentials`)).body.credentials, []);

  await log.waitFor(
    (event) => event.event_type === 'credential.changed' && (event.payload as { action: string }).action === 'deleted',
    'the deletion event',
  );
  const events = log.events;
  const changed = events.filter((event) => event.event_type === 'credential.changed').map((event) => event.payload);
  t.same(changed, [
    { name: 'provider:openai', action: 'set' },
    { name: 'provider:openai', action: 'set' },
    { name: 'provider:openai', action: 'deleted' },
  ]);
  assertNoSecret(t, responses.join('\n'), 'any response');
  assertNoSecret(t, JSON.stringify(events), 'any event');
  assertNoSecret(t, JSON.stringify(logs.body), 'the agent log');
  const daemonLog = d.stdout() + d.stderr();
  t.match(daemonLog, /"level":20/, 'the daemon logged at debug level');
  assertNoSecret(t, daemonLog, 'the daemon log');
});
