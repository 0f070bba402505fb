/**
 * Tracked folders at boot: an agent created with `start: true` runs again after a restart, with
 * its history; the boot autostart reports every skip reason in one log line and one
 * `tracked.autostarted` event; with the extension off its routes and start-by-name answer 503 naming
 * it while start by absolute path still works. Built daemons (runDaemon); the extension's own
 * `ctx.launcher` is tested in tracked-folders-boot-internals.test.ts.
 */
import t from 'tap';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { daemonStarted } from './helpers/daemon-started.js';
import { createAgentFile } from './helpers/agent-file.js';
import { nextLogEvent, reviewedAgentFile, trackedManifest } from './helpers/tracked-folders.js';

t.test('a restart brings the agents back: autostart at boot with every skip reason', async (t) => {
  const dataDir = tempDir(t);
  const agents = tempDir(t);
  const first = await runDaemon(t, { dataDir, extensions: trackedManifest() });
  const log = await eventLog(t, first);
  t.equal((await first.request('POST', '/identity/create', { passphrase: 'owner passphrase' })).status, 201);

  const created = await first.request('POST', '/agents/create', { name: 'Helper', directory: agents, start: true });
  t.equal(created.status, 201);
  t.equal(created.body.started, true);
  const helperId = created.body.agentId;
  const locked = await first.request('POST', '/agents/create', {
    name: 'Locked',
    directory: agents,
    start: true,
    password: 'agent password',
  });
  t.equal(locked.status, 201);
  // No model is configured: the turn ends in agent.error, but the user's message is history all the same.
  const turnOver = nextLogEvent(log, 'agent.error', (event) => event.agent_id === helperId);
  const chat = await first.request('POST', '/agents/Helper/chat', { text: 'remember the blue door' });
  t.equal(chat.status, 202);
  await turnOver;
  const before = (await first.request('GET', `/agents/${helperId}/loop?limit=500&offset=0`)).body.rows;
  t.ok(
    before.some((row: any) => JSON.stringify(row).includes('remember the blue door')),
    'the chat is in the history',
  );
  // Files the boot must skip, each for its own reason.
  await createAgentFile(agents, { name: 'manual', autostart: false });
  await createAgentFile(agents, { name: 'stranger', autostart: true });
  const twin = await reviewedAgentFile(first, agents, { name: 'twin', autostart: true });
  writeFileSync(join(agents, 'broken.agt'), 'not a database');
  t.same((await first.request('GET', '/settings/trackedFolders')).body.value, [agents], 'create tracked its directory');
  mkdirSync(join(agents, 'team', 'a'), { recursive: true });
  const nested = await first.request('POST', '/agents/create', {
    name: 'Nested',
    directory: join(agents, 'team', 'a'),
  });
  t.equal(nested.status, 201);
  t.same(
    (await first.request('GET', '/settings/trackedFolders')).body.value,
    [agents],
    'a folder the tracked one reaches is not tracked twice',
  );
  t.equal(await first.stop(), 0, 'the first daemon stopped cleanly');
  // Copied once the first daemon let go of it: the watcher may have started the reviewed autostart file,
  // and a copy taken meanwhile would carry that daemon's live lease.
  copyFileSync(twin, join(agents, 'twin-copy.agt'));

  // The second daemon: same data directory, nothing passed but the manifest; it logs at level info, so
  // its stderr holds the autostart's one line.
  const second = await runDaemon(t, { dataDir, extensions: trackedManifest(), env: { AGT_LOG_LEVEL: 'info' } });
  const boot = await daemonStarted(t, second);
  const get = async (path: string) => (await second.request('GET', path)).body;
  const listed = (await get('/agents')) as Array<{ id: string; name: string }>;
  t.same(
    listed.map((a) => a.name).sort(),
    ['Helper', 'twin'],
    'the created agent is running again (and the reviewed autostart file)',
  );
  t.match(await get(`/agents/${helperId}/status`), { id: helperId, name: 'Helper' });
  const after = (await get(`/agents/${helperId}/loop?limit=500&offset=0`)).rows;
  t.ok(
    after.some((row: any) => JSON.stringify(row).includes('remember the blue door')),
    'with its history',
  );
  const logLines = second
    .stderr()
    .split('\n')
    .filter((line) => line.includes('tracked folders autostart:'));
  t.equal(logLines.length, 1, 'one log line');
  t.match(logLines[0], /tracked folders autostart: 2 started, 5 skipped \(.*2 not_autostart.*\), 1 failed/);

  // What the boot announced: read from the stream's replay.
  const payload = (await boot.waitFor((event) => event.event_type === 'tracked.autostarted', 'tracked.autostarted'))
    .payload as any;
  t.same(payload.started.map((s: any) => s.name).sort(), ['Helper', 'twin']);
  t.same(
    payload.skipped.map((s: any) => [s.name, s.reason]).sort(),
    [
      ['Locked', 'password_protected'],
      ['Nested', 'not_autostart'],
      ['manual', 'not_autostart'],
      ['stranger', 'unreviewed'],
      ['twin', 'already_loaded'],
    ],
    'the copy of twin (same agent id) is already loaded from the other file',
  );
  t.same(
    payload.failed.map((f: any) => f.filePath),
    [join(agents, 'broken.agt')],
  );
  t.equal(payload.scanned, 8);

  const folders = await get('/tracked-folders');
  t.same(folders, { folders: [{ path: agents, exists: true, agentCount: 7, truncated: false }], maxScanDepth: 5 });
});

t.test('extension off: its routes and start by name answer 503 naming it; start by path still works', async (t) => {
  const agents = tempDir(t);
  const d = await runDaemon(t, { extensions: trackedManifest(false), settings: { trackedFolders: [agents] } });
  const path = await reviewedAgentFile(d, agents, { name: 'Pathy', autostart: true });
  for (const route of ['/tracked-folders', '/tracked-folders/agents']) {
    const res = await d.request('GET', route);
    t.equal(res.status, 503, route);
    t.match(res.body, {
      code: 'unavailable',
      extension: 'tracked-folders',
      error: /extension tracked-folders is disabled/,
    });
  }
  t.equal((await d.request('POST', '/tracked-folders', { path: agents })).status, 503);
  t.same((await d.request('GET', '/agents')).body, [], 'no autostart while it is off');
  const byName = await d.request('POST', '/agents/Pathy/start');
  t.equal(byName.status, 503);
  t.match(byName.body, { code: 'unavailable', error: /tracked-folders/ });
  const byPath = await d.request('POST', `/agents/${encodeURIComponent(path)}/start`);
  t.match(byPath, { status: 200, body: { success: true, loaded: true } });
});

t.test('not in the manifest at all: /tracked-folders answers 503 naming it', async (t) => {
  const d = await runDaemon(t, { extensions: { extensions: [] } });
  const res = await d.request('GET', '/tracked-folders');
  t.equal(res.status, 503);
  t.same(res.body, {
    error: 'extension tracked-folders is not listed in the extension manifest; its routes are unavailable',
    code: 'unavailable',
    extension: 'tracked-folders',
  });
  t.match(await d.request('POST', '/agents/Someone/start'), {
    status: 503,
    body: { code: 'unavailable', error: /tracked-folders/ },
  });
});
