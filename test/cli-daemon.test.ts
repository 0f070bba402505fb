/**
 * `agt` with docker's habits, against the daemon `agt daemon start` itself starts (the built agtd,
 * detached, its output in the data directory's agtd.log): daemon start, status, logs, stop; version;
 * agents ls; logs --tail and --since; an ambiguous name listing its candidates. The CLI runs in this
 * process (dist/cli), one command at a time.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { agtInProcess } from './helpers/cli-in-process.js';
import { httpClient, tempDir } from './helpers/daemon.js';

const dataDir = tempDir(t, 'agt-cli-daemon-');
const manifest = join(tempDir(t, 'agt-cli-daemon-manifest-'), 'extensions.json');
writeFileSync(manifest, JSON.stringify({ extensions: [] }));
// What a user's shell would hold: where the daemon lives, a free port, a cheap passphrase cost.
const env = {
  AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
  AGT_DAEMON_PORT: '0',
  MESH_PORT: '0',
  AGT_EXTENSIONS: manifest,
  AGT_KDF_COST: '10',
  AGT_LOG_LEVEL: 'info',
  AGT_LOG_FORMAT: 'json',
};
const agt = (...args: string[]) => agtInProcess(args, env);
const json = async (...args: string[]) => {
  const run = await agt('--json', ...args);
  if (run.code !== 0) throw new Error(`agt ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout);
};

let pid: number | undefined;
t.teardown(() => {
  // The detached daemon is this file's: stopped by agt daemon stop below, killed here when a test failed first.
  if (pid !== undefined) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
});

t.test('daemon status before start: not running, exit 3', async (t) => {
  const status = await agt('daemon', 'status');
  t.equal(status.code, 3);
  t.match(status.stdout, /not running: no daemon answers at http:\/\/127\.0\.0\.1:0 .*agt daemon start starts one/);
  t.equal((await agt('daemon', 'logs')).code, 1, 'no log file yet');
});

t.test('daemon start: detached, logging to agtd.log, answering when it returns', async (t) => {
  const started = await json('daemon', 'start');
  pid = started.pid;
  t.match(started, {
    started: true,
    pid: Number,
    url: /^http:\/\/127\.0\.0\.1:\d+$/,
    dataDir,
    log: join(dataDir, 'agtd.log'),
  });
  t.not(started.url, 'http://127.0.0.1:0', 'found through daemon-url, not the AGT_DAEMON_PORT=0 of the shell');
  const again = await json('daemon', 'start');
  t.match(again, { started: false, running: true, pid }, 'a running daemon is left alone');

  const status = await json('daemon', 'status');
  t.match(status, { running: true, pid, dataDir, version: String, url: started.url, log: join(dataDir, 'agtd.log') });
  const logs = await agt('daemon', 'logs', '-n', '50');
  t.equal(logs.code, 0, logs.stderr);
  t.match(logs.stdout, /agt daemon listening on http:\/\/127\.0\.0\.1:\d+/);
  t.match(logs.stdout, /"msg":"data directory /);

  const version = await json('version');
  t.match(version, { client: String, daemon: { version: status.version, url: started.url } });
  t.match((await agt('version')).stdout, /^agt \(client\): .*\nagtd \(daemon at http:.*\): /);
});

t.test('agents ls, logs --tail/--since, an ambiguous name lists its candidates', async (t) => {
  const token = readFileSync(join(dataDir, 'daemon-token'), 'utf8').trim();
  const url = readFileSync(join(dataDir, 'daemon-url'), 'utf8').trim();
  const request = httpClient(url, token);
  t.equal((await request('POST', '/identity/create', { passphrase: 'cli daemon test' })).status, 201);
  const one = (await request('POST', '/agents/create', { name: 'Curly', directory: tempDir(t, 'agt-curly-a-') })).body;
  const two = (await request('POST', '/agents/create', { name: 'Curly', directory: tempDir(t, 'agt-curly-b-') })).body;
  t.match(
    [one, two],
    [
      { agentId: String, filePath: /curly\.agt$/ },
      { agentId: String, filePath: /curly\.agt$/ },
    ],
  );

  const listed = await json('agents', 'ls');
  t.same(listed.map((agent: { id: string }) => agent.id).sort(), [one.agentId, two.agentId].sort());
  t.same(await json('agents', 'ls'), await json('ps'), 'agents ls is ps');

  const ambiguous = await agt('chat', 'Curly', '-m', 'hi');
  t.equal(ambiguous.code, 1);
  t.match(ambiguous.stderr, /"Curly" matches 2 loaded agents; use the id: /);
  for (const agent of [one, two])
    t.match(ambiguous.stderr, `${agent.agentId} (${agent.filePath})`, 'each candidate: id and file');

  // Each credential set writes one log row (`credential "<name>" set (sealed)`).
  for (const name of ['first', 'second', 'third']) {
    t.equal(
      (await request('PUT', `/agents/${one.agentId}/credentials/${name}`, { value: 'x' })).status,
      200,
      `log row for ${name}`,
    );
  }
  const names = (rows: Array<{ message: string }>) =>
    rows.map((row) => /credential "(\w+)"/.exec(row.message)?.[1] ?? row.message);
  t.same(names(await json('logs', one.agentId, '--tail', '2')), ['second', 'third']);
  t.same(names(await json('logs', one.agentId, '-n', '1')), ['third']);
  const all = await json('logs', one.agentId, '-n', '500');
  t.ok(all.length > 3, 'the created row and the three');
  t.same(await json('logs', one.agentId, '--since', '1h'), all, 'every row is of the last hour');
  t.same(await json('logs', one.agentId, '--since', '2999-01-01T00:00:00Z'), [], 'none after a date to come');
  const cut = all.at(-2).created_at;
  t.ok(
    (await json('logs', one.agentId, '--since', new Date(cut).toISOString())).every(
      (row: { created_at: number }) => row.created_at >= cut,
    ),
    'only rows since the date',
  );
  t.same(names(await json('logs', one.agentId, '--since', '10m', '--tail', '1')), ['third'], '--since then --tail');
  const bad = await agt('logs', one.agentId, '--since', 'yesterday');
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--since takes a duration \(30s, 10m, 2h, 1d\) or a date and time/);
});

t.test('daemon stop, then status says not running', async (t) => {
  t.match(await json('daemon', 'stop'), { stopped: true, pid });
  t.equal((await agt('daemon', 'status')).code, 3);
  t.notOk(existsSync(join(dataDir, 'daemon-url')), 'the daemon removed its daemon-url');
  t.match(readFileSync(join(dataDir, 'agtd.log'), 'utf8'), /agt daemon stopped \(api\)/, 'its stop line is in the log');
  pid = undefined;
});
