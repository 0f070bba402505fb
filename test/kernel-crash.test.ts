import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, spawnDaemon } from './helpers/daemon.js';

t.test('uncaught errors are logged and never stop the daemon', async (t) => {
  const d = await spawnDaemon(t, {
    extensions: {
      extensions: [{ name: 'crashy', module: join(ROOT, 'test/fixtures/extensions/crashy/index.ts'), enabled: true }],
    },
    env: { AGT_LOG_LEVEL: 'error' },
  });
  const token = readFileSync(join(d.dataDir, 'daemon-token'), 'utf8').trim();
  const call = (method: string, path: string) =>
    fetch(d.url + path, { method, headers: { authorization: `Bearer ${token}` } });

  const thrown = await call('POST', '/crashy/throw');
  t.equal(thrown.status, 500);
  const body = await thrown.json();
  t.equal(body.code, 'internal_error');
  t.notMatch(body.error, 'secret detail', 'internal messages stay in the log');

  t.equal((await call('POST', '/crashy/escape')).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.equal(d.child.exitCode, null, 'still running');
  t.equal((await call('GET', '/crashy')).status, 200, 'still serving');
  t.match(d.stderr(), /escaped timer error/, 'the escaped error was logged');
  t.match(d.stderr(), /unhandled rejection/);
  d.child.kill('SIGTERM');
  t.equal(await d.exited, 0);
});
