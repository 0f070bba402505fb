import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, spawnDaemon, tempDir } from './helpers/daemon.js';
import { rawRequest } from './helpers/raw-http.js';

const mode = (path: string) => statSync(path).mode & 0o777;

t.test('agtd --help lists options and variables', async (t) => {
  const res = spawnSync(process.execPath, [join(ROOT, 'bin/agtd.mjs'), '--help'], { encoding: 'utf8' });
  t.equal(res.status, 0);
  for (const name of ['--port', 'AGT_DAEMON_TOKEN', 'AGT_EXTENSIONS', 'AGT_LOG_LEVEL', 'AGT_SHUTDOWN_TIMEOUT_MS']) {
    t.match(res.stdout, name);
  }
});

t.test('first start: data dir 0700, token 0600, pid file, listening line; exit removes pid file', async (t) => {
  const root = tempDir(t);
  const dataDir = join(root, 'nested', 'agt');
  const d = await spawnDaemon(t, { dataDir: (mkdirSync(join(root, 'nested'), { recursive: true }), dataDir) });
  t.match(d.stdout(), /^agt daemon listening on http:\/\/127\.0\.0\.1:\d+\n/);
  t.equal(mode(dataDir), 0o700);
  const token = readFileSync(join(dataDir, 'daemon-token'), 'utf8').trim();
  t.match(token, /^[0-9a-f]{64}$/, '256 random bits');
  t.equal(mode(join(dataDir, 'daemon-token')), 0o600);
  t.equal(readFileSync(join(dataDir, 'agtd.pid'), 'utf8').split('\n')[0], String(d.child.pid));

  const second = await spawnDaemon(t, { dataDir });
  t.equal(second.url, '', 'second daemon does not listen');
  t.not(await second.exited, 0, 'second daemon exits non-zero');
  t.match(second.stderr(), /another agt daemon \(pid \d+\) is running/);

  const res = await fetch(`${d.url}/health`);
  t.equal(res.status, 200, 'the first daemon is unharmed');
  d.child.kill('SIGTERM');
  t.equal(await d.exited, 0);
  t.notOk(existsSync(join(dataDir, 'agtd.pid')), 'pid file removed at exit');
});

t.test('token: kept across restarts, malformed replaced, deleted rotates, env overrides', async (t) => {
  const dataDir = tempDir(t);
  const tokenPath = join(dataDir, 'daemon-token');
  const first = await spawnDaemon(t, { dataDir });
  const token1 = readFileSync(tokenPath, 'utf8').trim();
  first.child.kill('SIGINT');
  t.equal(await first.exited, 0, 'SIGINT shuts down cleanly');

  const { chmodSync } = await import('node:fs');
  chmodSync(tokenPath, 0o644);
  const again = await spawnDaemon(t, { dataDir });
  t.equal(readFileSync(tokenPath, 'utf8').trim(), token1, 'kept');
  t.equal(mode(tokenPath), 0o600, 'a loosened mode is repaired');
  again.child.kill('SIGTERM');
  await again.exited;

  writeFileSync(tokenPath, 'not a token');
  const fixed = await spawnDaemon(t, { dataDir });
  const token2 = readFileSync(tokenPath, 'utf8').trim();
  t.match(token2, /^[0-9a-f]{64}$/);
  t.not(token2, token1);
  fixed.child.kill('SIGTERM');
  await fixed.exited;

  const { rmSync } = await import('node:fs');
  rmSync(tokenPath);
  const rotated = await spawnDaemon(t, { dataDir, env: { AGT_DAEMON_TOKEN: 'from-the-environment' } });
  const viaEnv = await fetch(`${rotated.url}/openapi.json`, {
    headers: { authorization: 'Bearer from-the-environment' },
  });
  t.equal(viaEnv.status, 200, 'AGT_DAEMON_TOKEN overrides');
  t.notOk(existsSync(tokenPath), 'no file written when the env token is used');
  rotated.child.kill('SIGTERM');
  await rotated.exited;

  const fresh = await spawnDaemon(t, { dataDir });
  t.not(readFileSync(tokenPath, 'utf8').trim(), token2, 'deleting the file rotates the token');
  fresh.child.kill('SIGTERM');
  await fresh.exited;
});

t.test('a stale pid file is replaced', async (t) => {
  const dataDir = tempDir(t);
  // A pid that cannot be alive: beyond the kernel's pid range.
  writeFileSync(join(dataDir, 'agtd.pid'), '4194305\n');
  const d = await spawnDaemon(t, { dataDir });
  t.ok(d.url, 'started');
  t.equal(readFileSync(join(dataDir, 'agtd.pid'), 'utf8').split('\n')[0], String(d.child.pid));
  d.child.kill('SIGTERM');
  await d.exited;
});

t.test('start-up refusals are clear and non-zero', async (t) => {
  const malformed = tempDir(t);
  writeFileSync(join(malformed, 'settings.json'), '{"meshPort": "high"}');
  const bad = await spawnDaemon(t, { dataDir: malformed });
  t.not(await bad.exited, 0);
  t.match(bad.stderr(), /settings file .*settings\.json is invalid at \/meshPort/);

  const broken = tempDir(t);
  writeFileSync(join(broken, 'settings.json'), '{not json');
  const bad2 = await spawnDaemon(t, { dataDir: broken });
  t.not(await bad2.exited, 0);
  t.match(bad2.stderr(), /settings\.json is not valid JSON/);

  const exposed = await spawnDaemon(t, { env: { AGT_DAEMON_HOST: '0.0.0.0' } });
  t.not(await exposed.exited, 0);
  t.match(exposed.stderr(), /without AGT_DAEMON_TOKEN/);
});

t.test('shutdown over the API answers 202 and the process exits', async (t) => {
  const d = await spawnDaemon(t);
  const token = readFileSync(join(d.dataDir, 'daemon-token'), 'utf8').trim();
  const res = await rawRequest(d.url, {
    method: 'POST',
    path: '/daemon/shutdown',
    headers: { authorization: `Bearer ${token}` },
  });
  t.equal(res.status, 202, 'bodiless POST without Content-Type accepted');
  t.same(res.body, { accepted: true });
  t.equal(await d.exited, 0);
  t.notOk(existsSync(join(d.dataDir, 'agtd.pid')));
});
