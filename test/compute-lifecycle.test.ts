/**
 * The compute extension of the built daemon across unloads, shutdown (SIGTERM) and restart, against a
 * private dockerd: an agent's isolated container stops when it unloads; shutdown stops what the daemon
 * started (the shared container is removed, isolated ones are kept stopped) and never touches containers
 * it did not make; the next daemon on the same data dir finds its containers and the files in them.
 */
import t from 'tap';
import { startDockerEngine } from './helpers/docker.js';
import { bootCompute } from './helpers/compute.js';
import { tempDir } from './helpers/daemon.js';

const engine = await startDockerEngine(t);
const skip = typeof engine === 'string' ? `compute tests need a Docker engine: ${engine}` : false;
if (skip) t.comment(skip);

t.test('unload, shutdown and restart', { skip }, async (t) => {
  if (typeof engine === 'string') return;
  const state = async (name: string) => {
    const res = await engine.api('GET', `/containers/${name}/json`);
    return res.status === 404 ? 'gone' : (res.body.State.Status as string);
  };
  const dataDir = tempDir(t, 'agt-compute-data-');
  const first = await bootCompute(t, engine.host, { dataDir });
  t.equal((await first.d.request('POST', '/compute/setup', {})).status, 200);

  // Someone else's container on the same engine, from the same image.
  const foreign = await engine.api('POST', '/containers/create?name=not-agt', {
    Image: 'agt-compute-base:1',
    Cmd: ['/bin/sleep', '600'],
    HostConfig: { NetworkMode: 'none' },
  });
  t.equal(foreign.status, 201);
  t.equal((await engine.api('POST', '/containers/not-agt/start')).status, 204);
  t.teardown(() => engine.api('DELETE', '/containers/not-agt?force=true'));

  const shared = await first.agent();
  const isolated = await first.agent({ security: { compute_tier: 'isolated' } } as never);
  const leaving = await first.agent({ security: { compute_tier: 'isolated' } } as never);
  const sharedName = (await first.tool(shared, { command: 'echo s > f' })).result.target as string;
  const isolatedName = (await first.tool(isolated, { command: 'echo kept > f' })).result.target as string;
  const leavingName = (await first.tool(leaving, { command: 'true' })).result.target as string;
  t.same(
    (await first.d.request('GET', '/compute')).body.containers.map((c: any) => c.name).sort(),
    [isolatedName, leavingName, sharedName].sort(),
    'only its own containers are listed',
  );

  t.equal((await first.d.request('POST', `/agents/${leaving}/unload`)).status, 200);
  t.equal(await state(leavingName), 'exited', "an unloaded agent's isolated container is stopped");

  const started = Date.now();
  t.equal(await first.d.stop(), 0, 'the daemon stops cleanly (SIGTERM)');
  t.ok(Date.now() - started < 20_000, 'within the shutdown deadline');
  t.equal(await state(sharedName), 'gone', 'the shared container is removed at shutdown');
  t.equal(await state(isolatedName), 'exited', 'an isolated container is kept, stopped');
  t.equal(await state('not-agt'), 'running', 'a container it did not make is not touched');
  t.equal(
    (await engine.api('GET', `/volumes/${sharedName}-work`)).status,
    200,
    "the shared work volume (agents' files) stays",
  );

  const second = await bootCompute(t, engine.host, { dataDir });
  const found = (await second.d.request('GET', '/compute')).body.containers;
  t.match(
    found.find((c: any) => c.name === isolatedName),
    { tier: 'isolated', agentId: isolated, running: false },
    'the next daemon finds its containers',
  );
  t.notOk(found.some((c: any) => c.name === 'not-agt'));
  const reloaded = await second.d.request('POST', '/agents/load', { filePath: first.files.get(isolated) });
  t.equal(reloaded.body.id, isolated);
  const again = await second.tool(isolated, { command: 'cat f' });
  t.match(
    again.result,
    { target: isolatedName, exit_code: 0, stdout: 'kept\n' },
    'the same container, started again, with its files',
  );
  const back = await second.d.request('POST', '/agents/load', { filePath: first.files.get(shared) });
  t.equal(
    (await second.tool(back.body.id, { command: 'cat f' })).result.stdout,
    's\n',
    'a shared agent finds its work dir in the new shared container',
  );
});
