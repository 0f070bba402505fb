/**
 * `POST /agents/create` over real HTTP: the happy path (file, identity, review mark, tracked folder,
 * loaded), generated names, provider/model overrides, default directories, `start`, and every refusal
 * code in the order the route checks them, from the built daemon (one for the file; the
 * runtime-hook cases are in create-agent-internals.test.ts). Cheap scrypt keeps password agents fast.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { runDaemon, tempDir, type SpawnedDaemon } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';

/**
 * One daemon for the file, its HOME a temp folder (the default agents folder is under it). The refusal
 * test runs first: it starts with no owner and leaves one, unlocked, for the others.
 */
const home = tempDir(t, 'agt-home-');
let shared: Promise<SpawnedDaemon> | undefined;
const daemon = () => (shared ??= runDaemon(t, { env: { HOME: home } }));

/** The shared daemon with `settings` patched in (null removes a key). */
async function withSettings(t: Test, settings: Record<string, unknown>): Promise<SpawnedDaemon> {
  const d = await daemon();
  const patched = await d.request('PATCH', '/settings', settings);
  t.equal(patched.status, 200, `settings ${Object.keys(settings).join(', ')}`);
  return d;
}

/** Writes a user template built from the standard one, optionally changed, and reviews it. */
async function userTemplate(
  d: SpawnedDaemon,
  id: string,
  change: (config: any) => void = () => {},
  review = true,
): Promise<void> {
  const standard = await d.request('GET', '/templates/standard');
  const config = structuredClone(standard.body.config);
  change(config);
  mkdirSync(join(d.dataDir, 'templates'), { recursive: true });
  writeFileSync(
    join(d.dataDir, 'templates', `${id}.json`),
    JSON.stringify({ name: id, description: 'test template', config }),
  );
  if (review) {
    const reviewed = await d.request('POST', `/templates/${id}/review`);
    if (reviewed.status !== 200) throw new Error(`template review failed: ${JSON.stringify(reviewed.body)}`);
  }
}

t.test('every refusal code', async (t) => {
  const dir = tempDir(t);
  const notADir = join(dir, 'plain-file');
  writeFileSync(notADir, 'x');
  const d = await withSettings(t, {
    providers: [{ id: 'local', type: 'openai-compatible', name: 'Local', baseUrl: 'http://127.0.0.1:9/v1' }],
  });

  const early = await d.request('POST', '/agents/create', { name: 'Early', directory: dir });
  t.equal(early.status, 409);
  t.equal(early.body.code, 'identity_not_ready');
  t.equal(early.body.identity.status, 'none', 'body carries IdentityStatus');
  t.notOk(existsSync(join(dir, 'early.agt')), 'nothing written');

  await d.request('POST', '/identity/create', { passphrase: 'owner passphrase' });
  await d.request('POST', '/identity/lock');
  const locked = await d.request('POST', '/agents/create', { name: 'Early', directory: dir });
  t.equal(locked.body.code, 'identity_not_ready', 'a locked owner cannot create');
  t.equal(locked.body.identity.status, 'locked');
  await d.request('POST', '/identity/unlock', { passphrase: 'owner passphrase' });

  const bad: Array<[string, Record<string, unknown>]> = [
    ['relative directory', { directory: 'relative/dir' }],
    ['missing directory', { directory: join(dir, 'missing') }],
    ['directory is a file', { directory: notADir }],
    ['name too long', { name: 'x'.repeat(65), directory: dir }],
    ['empty name', { name: '   ', directory: dir }],
    ['name without letters or digits', { name: '!!!', directory: dir }],
    ['control character in name', { name: 'a\u0007b', directory: dir }],
    ['unknown provider', { provider: 'nope', directory: dir }],
    ['unknown field', { nmae: 'typo', directory: dir }],
    ['passwordConfirm without password', { passwordConfirm: 'x', directory: dir }],
  ];
  for (const [what, body] of bad) {
    const res = await d.request('POST', '/agents/create', body);
    t.equal(res.status, 400, what);
    t.equal(res.body.code, 'bad_request', what);
  }

  const missing = await d.request('POST', '/agents/create', { directory: dir, template: 'no-such-template' });
  t.match(missing, { status: 422, body: { code: 'template_missing' } });
  writeFileSync(join(d.dataDir, 'templates', 'broken.json'), '{ not json');
  t.match(await d.request('POST', '/agents/create', { directory: dir, template: 'broken' }), {
    status: 422,
    body: { code: 'template_invalid' },
  });
  await userTemplate(d, 'unreviewed', () => {}, false);
  t.match(await d.request('POST', '/agents/create', { directory: dir, template: 'unreviewed' }), {
    status: 422,
    body: { code: 'template_unreviewed' },
  });
  await userTemplate(d, 'guarded', (config) => (config.security = { password_required: true }));
  const needsPassword = await d.request('POST', '/agents/create', {
    name: 'Guarded',
    directory: dir,
    template: 'guarded',
  });
  t.match(needsPassword, { status: 400, body: { code: 'password_required' } });
  const mismatch = await d.request('POST', '/agents/create', {
    name: 'Guarded',
    directory: dir,
    template: 'guarded',
    password: 'pw-one',
    passwordConfirm: 'pw-two',
  });
  t.match(mismatch, { status: 403, body: { code: 'wrong_password' } });
  t.notOk(existsSync(join(dir, 'guarded.agt')), 'refused creates leave no file');
  const guarded = await d.request('POST', '/agents/create', {
    name: 'Guarded',
    directory: dir,
    template: 'guarded',
    password: 'pw-one',
    passwordConfirm: 'pw-one',
  });
  t.equal(guarded.status, 201, 'with a password the template is usable');

  const first = await d.request('POST', '/agents/create', { name: 'Twin', directory: dir });
  t.equal(first.status, 201);
  const taken = await d.request('POST', '/agents/create', { name: 'twin', directory: dir });
  t.match(taken, { status: 409, body: { code: 'name_taken' } }, 'same slug, same file');
});

t.test('creates, seals, reviews, tracks and loads an agent', async (t) => {
  const dir = tempDir(t);
  const d = await daemon();
  const log = await eventLog(t, d);

  const res = await d.request('POST', '/agents/create', { name: 'Research Helper', directory: dir });
  t.equal(res.status, 201);
  t.same(Object.keys(res.body).sort(), ['agentId', 'did', 'filePath', 'name', 'started']);
  t.match(res.body, { name: 'Research Helper', filePath: join(dir, 'research-helper.agt'), started: false });
  t.match(res.body.did, /^did:key:z6Mk/);
  t.ok(existsSync(res.body.filePath), 'file written as <slug>.agt');

  const ref = await d.request('GET', `/agents/${res.body.agentId}`);
  t.equal(ref.status, 200, 'loaded');
  t.equal(ref.body.config.name, 'Research Helper');
  t.equal(ref.body.config.model.provider, 'local', 'standard template defaults');

  const review = await d.request('GET', `/agents/review?filePath=${encodeURIComponent(res.body.filePath)}`);
  t.equal(review.body.reviewed, true, 'marked reviewed');
  t.match(review.body.summary.identity, { agentDid: res.body.did, ownerIsYou: true, scenario: 'mine' });

  const tracked = async () =>
    ((await d.request('GET', '/settings')).body.trackedFolders as string[]).filter((folder) => folder === dir);
  t.same(await tracked(), [dir], 'directory tracked');
  const again = await d.request('POST', '/agents/create', { name: 'Second', directory: dir });
  t.equal(again.status, 201);
  t.same(await tracked(), [dir], 'tracked once');

  const status = await d.request('GET', `/agents/${res.body.agentId}/status`);
  t.notOk(status.body.degraded, 'a fresh agent is not degraded');
  await log.waitFor(
    (event) => event.event_type === 'agent.loaded' && event.agent_id === res.body.agentId,
    'agent.loaded',
  );
  t.notOk(
    log.events.some((event) => event.event_type === 'agent.started'),
    'not started without start: true',
  );

  const logs = await d.request('GET', `/agents/${res.body.agentId}/logs?event=created`);
  t.equal(logs.body.logs.length, 1, 'creation logged in the agent log');
});

t.test('a generated name when none is given, unique in the directory', async (t) => {
  const dir = tempDir(t);
  const d = await withSettings(t, { agentsFolder: dir });
  const names = new Set<string>();
  for (let i = 0; i < 3; i++) {
    const res = await d.request('POST', '/agents/create');
    t.equal(res.status, 201, 'a bodiless POST is fine');
    t.match(res.body.name, /^[A-Z][a-z]+ [A-Z][a-z]+( \d+)?$/);
    t.equal(
      res.body.filePath,
      join(dir, `${res.body.name.toLowerCase().replace(/ /g, '-')}.agt`),
      'default directory: settings.agentsFolder',
    );
    names.add(res.body.name);
  }
  t.equal(names.size, 3, 'no two agents got the same name');
});

t.test('default directories: a missing agentsFolder is created, else ~/Documents/agt-agents', async (t) => {
  const base = tempDir(t);
  const folder = join(base, 'nested', 'agents');
  const d = await withSettings(t, { agentsFolder: folder });
  const res = await d.request('POST', '/agents/create', { name: 'Nested' });
  t.equal(res.status, 201);
  t.equal(res.body.filePath, join(folder, 'nested.agt'));

  t.equal((await d.request('PATCH', '/settings', { agentsFolder: null })).status, 200, 'agentsFolder removed');
  const docs = await d.request('POST', '/agents/create', { name: 'In Documents' });
  t.equal(docs.status, 201);
  t.equal(docs.body.filePath, join(home, 'Documents', 'agt-agents', 'in-documents.agt'));
});

t.test('provider and model override the template model', async (t) => {
  const dir = tempDir(t);
  const d = await withSettings(t, {
    providers: [
      {
        id: 'local',
        type: 'openai-compatible',
        name: 'Local',
        baseUrl: 'http://127.0.0.1:9/v1',
        defaultModel: 'small',
      },
      { id: 'other', type: 'openai-compatible', name: 'Other', baseUrl: 'http://127.0.0.1:9/v1', defaultModel: 'big' },
    ],
  });
  const byProvider = await d.request('POST', '/agents/create', { name: 'P', directory: dir, provider: 'other' });
  t.equal(byProvider.status, 201);
  t.match((await d.request('GET', `/agents/${byProvider.body.agentId}`)).body.config.model, {
    provider: 'other',
    model_id: 'big',
  });
  const both = await d.request('POST', '/agents/create', {
    name: 'PM',
    directory: dir,
    provider: 'other',
    model: 'tuned',
  });
  t.match((await d.request('GET', `/agents/${both.body.agentId}`)).body.config.model, {
    provider: 'other',
    model_id: 'tuned',
  });
  const modelOnly = await d.request('POST', '/agents/create', { name: 'M', directory: dir, model: 'solo' });
  t.match((await d.request('GET', `/agents/${modelOnly.body.agentId}`)).body.config.model, {
    provider: 'local',
    model_id: 'solo',
  });
});

t.test('start: true starts the agent through the runtime', async (t) => {
  const dir = tempDir(t);
  const d = await daemon();
  const log = await eventLog(t, d);
  const res = await d.request('POST', '/agents/create', { name: 'Starter', directory: dir, start: true });
  t.equal(res.status, 201);
  t.equal(res.body.started, true);
  const isStarted = (event: { event_type: string; agent_id: string | null }) =>
    event.event_type === 'agent.started' && event.agent_id === res.body.agentId;
  await log.waitFor(isStarted, 'agent.started');
  // Started already: a start by name is a no-op (no second agent.started).
  const again = await d.request('POST', `/agents/${res.body.agentId}/start`);
  t.match(again, { status: 200, body: { success: true, loaded: false, startupTriggered: false } });
  await d.request('GET', '/health');
  t.equal(log.events.filter(isStarted).length, 1, 'started once');
});

t.test('a directory that cannot hold an agent file is a 400, not a 500', async (t) => {
  const d = await daemon();
  const res = await d.request('POST', '/agents/create', { name: 'Nowhere', directory: '/proc' });
  t.equal(res.status, 400);
  t.equal(res.body.code, 'bad_request');
  t.notOk(existsSync('/proc/nowhere.agt'));
  t.notOk(
    (await d.request('GET', '/agents')).body.some((agent: { name: string }) => agent.name === 'Nowhere'),
    'nothing loaded',
  );
});
