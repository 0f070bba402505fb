import t from 'tap';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AUTOSTART_LIMITS, findAgentFiles } from '../kernel/agents/autostart.js';
import { runDaemon, tempDir, type DaemonClient, type SpawnedDaemon } from './helpers/daemon.js';
import { createAgentFile, loadNewAgent } from './helpers/agent-file.js';
import { fileWithBadConfig, fileWithBadValue } from './helpers/hostile-file.js';

/** Creates an agent through the API (reviewed here), marks it autostart, unloads it. */
async function createAutostart(d: DaemonClient, dir: string, name: string, password?: string): Promise<void> {
  const created = await d.request('POST', '/agents/create', {
    name,
    directory: dir,
    ...(password ? { password } : {}),
  });
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  const { config } = (await d.request('GET', `/agents/${created.body.agentId}/config`)).body;
  const put = await d.request('PUT', `/agents/${created.body.agentId}/config`, { ...config, autostart: true });
  if (put.status !== 200) throw new Error(JSON.stringify(put.body));
  await d.request('POST', `/agents/${created.body.agentId}/unload`);
}

/** One daemon for the file (the folder-walk test needs none). */
let shared: Promise<SpawnedDaemon> | undefined;
const daemon = () => (shared ??= runDaemon(t));

t.test('autostart starts reviewed autostart agents and says why it skipped the others', async (t) => {
  const dir = tempDir(t);
  const d = await daemon();
  t.equal((await d.request('POST', '/identity/create', { passphrase: 'owner passphrase' })).status, 201);
  await createAutostart(d, dir, 'Auto');
  await createAutostart(d, dir, 'Locked', 'agent password');
  await createAgentFile(dir, { name: 'manual', autostart: false });
  await createAgentFile(dir, { name: 'stranger', autostart: true });
  writeFileSync(join(dir, 'broken.agt'), 'not a database at all');
  t.same((await d.request('GET', '/agents')).body, [], 'nothing loaded before the scan');

  const res = await d.request('POST', '/agents/autostart', { trackedDirs: [dir] });
  t.equal(res.status, 200);
  t.equal(res.body.scanned, 5);
  t.same(
    res.body.started.map((s: any) => s.name),
    ['Auto'],
  );
  t.same(res.body.skipped.map((s: any) => [s.name, s.reason]).sort(), [
    ['Locked', 'password_protected'],
    ['manual', 'not_autostart'],
    ['stranger', 'unreviewed'],
  ]);
  t.same(
    res.body.failed.map((f: any) => f.filePath),
    [join(dir, 'broken.agt')],
  );
  t.same(
    (await d.request('GET', '/agents')).body.map((a: any) => a.name),
    ['Auto'],
    'only the eligible agent loaded',
  );

  const again = await d.request('POST', '/agents/autostart', { trackedDirs: [dir], maxDepth: 0 });
  t.match(
    again.body.skipped.find((s: any) => s.name === 'Auto'),
    { reason: 'already_loaded' },
  );
  t.equal((await d.request('POST', '/agents/autostart', { trackedDirs: ['relative/dir'] })).status, 400);
  t.equal((await d.request('POST', '/agents/autostart', {})).status, 400);
  // The daemon outlives this test, its folder does not: nothing of it stays loaded.
  for (const agent of (await d.request('GET', '/agents')).body) await d.request('POST', `/agents/${agent.id}/unload`);
});

t.test(
  'the folder walk skips hidden, package, system and linked folders, and says when a bound cut it short',
  async (t) => {
    const root = tempDir(t);
    const make = (path: string) => mkdirSync(join(root, path), { recursive: true });
    for (const folder of ['sub/deeper', 'node_modules/pkg', '.git/objects', '.hidden', 'elsewhere']) make(folder);
    for (const file of [
      'top.agt',
      'sub/one.agt',
      'sub/deeper/two.agt',
      'node_modules/pkg/no.agt',
      '.git/objects/no.agt',
      '.hidden/no.agt',
      'elsewhere/linked.agt',
      'sub/notes.txt',
    ]) {
      writeFileSync(join(root, file), '');
    }
    symlinkSync(join(root, 'elsewhere'), join(root, 'sub', 'link'));
    symlinkSync(join(root, 'top.agt'), join(root, 'sub', 'alias.agt'));
    const all = await findAgentFiles([join(root, 'sub'), root], 5);
    t.same(
      all,
      {
        files: [
          join(root, 'sub/one.agt'),
          join(root, 'sub/deeper/two.agt'),
          join(root, 'top.agt'),
          join(root, 'elsewhere/linked.agt'),
        ],
        truncatedBy: null,
      },
      'each file once; links never followed',
    );
    t.same((await findAgentFiles([root], 0)).files, [join(root, 'top.agt')], 'maxDepth 0: the folder itself');
    t.same(
      (await findAgentFiles(['/'], 1)).files.filter((path) => /^\/(proc|sys|dev|run|boot|snap)\//.test(path)),
      [],
      'system folders are skipped',
    );

    const limits = { ...AUTOSTART_LIMITS };
    t.same((await findAgentFiles([root], 5, { ...limits, maxEntries: 3 })).truncatedBy, 'entries');
    t.same(await findAgentFiles([root], 5, { ...limits, maxAgentFiles: 2 }), {
      files: [join(root, 'top.agt'), join(root, 'elsewhere/linked.agt')],
      truncatedBy: 'agent_files',
    });
    t.same((await findAgentFiles([root], 5, { ...limits, timeBudgetMs: -1 })).truncatedBy, 'time');
    t.same(AUTOSTART_LIMITS, { maxEntries: 10_000, maxAgentFiles: 200, timeBudgetMs: 5_000 });
  },
);

// The whole machine holds other tests' hostile files (TEXT that is not UTF-8 aborts libsql): they fail in
// the file reader's process, never in the daemon.
t.test('a scan of the whole machine is bounded and never holds up other requests', async (t) => {
  const d = await daemon();
  let scanning = true;
  let slowest = 0;
  let answered = 0;
  const poll = (async () => {
    while (scanning) {
      const started = Date.now();
      const res = await fetch(`${d.url}/health`);
      await res.text();
      slowest = Math.max(slowest, Date.now() - started);
      answered += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const started = Date.now();
  const res = await d.request('POST', '/agents/autostart', { trackedDirs: ['/'], maxDepth: 10 });
  const took = Date.now() - started;
  scanning = false;
  await poll;
  t.equal(res.status, 200);
  t.type(res.body.truncated, 'boolean');
  if (res.body.truncated) t.match(res.body.truncatedBy, /^(entries|agent_files|time)$/);
  t.ok(res.body.scanned <= 200, `${res.body.scanned} agent files`);
  t.ok(took < 10_000, `the scan answered in ${took} ms (5 s budget)`);
  t.ok(answered > 0, `${answered} health checks answered meanwhile`);
  t.ok(slowest < 1_000, `the slowest /health took ${slowest} ms`);
  t.same(res.body.started, [], 'nothing foreign was started');
});

t.test('summaries are read on a worker thread: a hostile file fails that file only; nothing stays open', async (t) => {
  const dir = tempDir(t);
  const d = await daemon();
  await createAgentFile(dir, { name: 'stranger', autostart: true });
  // An SQLite header followed by garbage: libsql fails inside the worker, not in the daemon.
  writeFileSync(join(dir, 'hostile.agt'), Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(8192, 0xa5)]));
  const openInDir = () =>
    readdirSync(`/proc/${d.child.pid}/fd`).filter((fd) => {
      try {
        return readlinkSync(`/proc/${d.child.pid}/fd/${fd}`).startsWith(dir);
      } catch {
        return false;
      }
    }).length;

  const res = await d.request('POST', '/agents/autostart', { trackedDirs: [dir] });
  t.same(
    res.body.skipped.map((s: any) => [s.name, s.reason]),
    [['stranger', 'unreviewed']],
  );
  t.same(
    res.body.failed.map((f: any) => f.filePath),
    [join(dir, 'hostile.agt')],
  );
  t.match(res.body.failed[0].error, /hostile\.agt/);
  t.equal(openInDir(), 0, "the worker released every descriptor of the files it read (the daemon's /proc/<pid>/fd)");
  t.equal((await d.request('GET', '/health')).status, 200, 'the daemon is fine');
});

t.test('a file whose stored TEXT is not UTF-8 is refused without harm to the daemon', async (t) => {
  const dir = tempDir(t);
  const d = await daemon();
  const badConfig = await fileWithBadConfig(dir, 'bad-config');
  const planted = await fileWithBadValue(dir, 'planted');
  const scan = await d.request('POST', '/agents/autostart', { trackedDirs: [dir] });
  t.same(
    scan.body.failed.map((f: any) => f.filePath),
    [badConfig],
    'the summary of the bad config fails; the planted value is not part of a summary',
  );
  for (const filePath of [badConfig, planted]) {
    const res = await d.request('POST', '/agents/load', { filePath });
    t.equal(res.status, 422, `${filePath}: ${JSON.stringify(res.body)}`);
    t.equal(res.body.code, 'load_failed');
  }
  t.equal((await d.request('GET', '/health')).status, 200, 'the daemon is fine');

  // A file the daemon closed itself is opened directly next time (its fingerprint is kept).
  const id = await loadNewAgent(d, dir, { name: 'own' });
  t.equal((await d.request('POST', `/agents/${id}/unload`)).status, 200);
  const vetted = readFileSync(join(d.dataDir, 'vetted-files.jsonl'), 'utf8');
  t.match(vetted, join(dir, 'own.agt'));
  t.equal((await d.request('POST', '/agents/load', { filePath: join(dir, 'own.agt') })).status, 200);
});
