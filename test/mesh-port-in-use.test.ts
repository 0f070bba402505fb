/**
 * The mesh port taken by another process: the daemon runs on without a mesh, its log line says which
 * variable moves it, and `GET /runtime`, `GET /runtime/extensions`, `GET /network` and `agt status` show
 * the mesh as down with the reason; once the port is free, enabling the mesh again clears it. One built
 * daemon with the mesh extension only.
 */
import { createServer } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { eventually } from './helpers/channels.js';
import { agtInProcess } from './helpers/cli-in-process.js';
import { ROOT, runDaemon } from './helpers/daemon.js';

t.test('a mesh port in use is reported, with what moves it', async (t) => {
  const taken = createServer();
  await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
  const port = (taken.address() as { port: number }).port;
  t.teardown(() => new Promise((done) => taken.close(done)));

  const d = await runDaemon(t, {
    extensions: {
      extensions: [
        {
          name: 'mesh',
          module: join(ROOT, 'extensions/mesh/index.ts'),
          enabled: true,
          config: { mdns: { enabled: false } },
        },
      ],
    },
    env: { MESH_PORT: String(port), AGT_LOG_LEVEL: 'error', AGT_LOG_FORMAT: 'json' },
  });
  t.ok(d.url, `the daemon runs on without a mesh: ${d.stderr()}`);
  // The mesh listens when the extensions start, just after the daemon's own listening line.
  const line = await eventually('the mesh log line', () =>
    d
      .stderr()
      .split('\n')
      .filter(Boolean)
      .map((text) => JSON.parse(text) as { msg: string; port?: number })
      .find((entry) => entry.msg.startsWith('cannot listen')),
  );
  t.match(
    line,
    {
      port,
      msg: new RegExp(
        `cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use by another process \\(EADDRINUSE\\): set MESH_PORT to another port`,
      ),
    },
    'one log line naming the variable',
  );

  const problem = /^mesh server down: cannot listen on 127\.0\.0\.1:\d+: the port is in use .*MESH_PORT/;
  const runtime = (await d.request('GET', '/runtime')).body;
  t.match(
    runtime.extensions.find((e: { name: string }) => e.name === 'mesh'),
    { state: 'started', error: null, problem },
    'GET /runtime',
  );
  t.match((await d.request('GET', '/runtime/extensions/mesh')).body, { problem }, 'GET /runtime/extensions/mesh');
  t.match((await d.request('GET', '/network')).body.mesh, { running: false, error: /EADDRINUSE/ });
  const status = await agtInProcess(['--url', d.url, '--token', d.token, 'status']);
  t.equal(status.code, 0, status.stderr);
  t.match(
    status.stdout,
    /extensions\s+mesh \(mesh server down: cannot listen on 127\.0\.0\.1:\d+: the port is in use/,
    'agt status',
  );

  // The port freed, the mesh switched off and on again: it listens, and the problem is gone.
  await new Promise((done) => taken.close(done));
  t.equal((await d.request('POST', '/network/mesh/disable')).status, 200);
  t.equal((await d.request('POST', '/network/mesh/enable')).status, 200);
  t.match((await d.request('GET', '/network')).body.mesh, { running: true, error: null, port });
  t.equal((await d.request('GET', '/runtime/extensions/mesh')).body.problem, null, 'no problem once it listens');
});
