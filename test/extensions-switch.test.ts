/**
 * Turning extensions off and on (`PATCH /runtime/extensions/{name}`, docs/extensions.md) on the built daemon with
 * the shipped extensions and a third-party one that depends on `channels`: off stops the extension at once (the
 * mesh closes its own port, its routes answer 503) and is kept in the data directory across a restart; one another
 * running extension needs is refused; on loads it at the next start (`agt extensions off|on` too).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ROOT, runDaemon, shippedManifest, type SpawnedDaemon } from './helpers/daemon.js';
import { agtInProcess } from './helpers/cli-in-process.js';
import { meshUrlOf } from './helpers/mesh.js';

const manifest = shippedManifest({ mesh: { mdns: { enabled: false } } });
manifest.extensions.push({
  name: 'channels-echo',
  module: join(ROOT, 'test/fixtures/extensions/channels-echo/index.ts'),
  enabled: true,
  config: {},
});
let d: SpawnedDaemon = await runDaemon(t, { extensions: manifest });
const meshUrl = await meshUrlOf(d);
const patch = (name: string, body: unknown) => d.request('PATCH', `/runtime/extensions/${name}`, body);
const agt = (...args: string[]) =>
  agtInProcess(args, { NO_COLOR: '1', AGT_DAEMON_URL: d.url, AGT_DAEMON_TOKEN: d.token });
const state = async (name: string) => (await d.request('GET', `/runtime/extensions/${name}`)).body.state as string;

t.test('off: stopped at once, its port closed, its routes 503, kept in the data directory', async (t) => {
  t.equal((await fetch(`${meshUrl}/.well-known/agent-card.json`)).status < 500, true, 'the mesh serves');
  const off = await patch('mesh', { enabled: false });
  t.equal(off.status, 200);
  t.match(off.body, { name: 'mesh', enabled: false, loaded: false, state: 'disabled', restartRequired: false });
  await t.rejects(fetch(`${meshUrl}/.well-known/agent-card.json`), 'its own server is closed');
  const routes = await d.request('GET', '/network/peers');
  t.equal(routes.status, 503);
  t.match(routes.body, { code: 'unavailable', error: /mesh.*disabled/ });
  const kept = JSON.parse(readFileSync(join(d.dataDir, 'extensions.config.json'), 'utf8'));
  t.same(kept.extensions.mesh, { enabled: false });
  t.equal((await patch('mesh', { enabled: false })).status, 200, 'again: nothing more to do');
});

t.test('an extension another running one depends on is not turned off', async (t) => {
  const refused = await patch('channels', { enabled: false });
  t.equal(refused.status, 409);
  t.match(refused.body.error, /channels-echo depend on channels/);
  t.equal(await state('channels'), 'started');
});

t.test('refusals: an unknown name, a bad body', async (t) => {
  t.equal((await patch('nothing-such', { enabled: false })).status, 404);
  t.equal((await patch('telemetry', { enabled: 'no' })).status, 400);
  t.equal((await patch('telemetry', { enabled: false, more: 1 })).status, 400);
  t.equal(await state('telemetry'), 'started');
});

t.test('on: at the next start; off stays off across a restart', async (t) => {
  const on = await patch('mesh', { enabled: true });
  t.equal(on.status, 200);
  t.match(on.body, { enabled: true, state: 'disabled', restartRequired: true });
  t.match((await d.request('GET', '/network/peers')).body.error, /next start/, 'the 503 says when it loads');
  const cliOff = await agt('extensions', 'off', 'telemetry');
  t.equal(cliOff.code, 0, cliOff.stderr);
  t.match(cliOff.stdout, /telemetry is off/);
  d = await d.restart();
  t.equal(await state('mesh'), 'started', 'turned on: loaded at the start');
  t.not((await d.request('GET', '/network/peers')).status, 503);
  t.equal(await state('telemetry'), 'disabled', 'turned off: stays off');
  t.equal((await d.request('GET', '/metrics')).status, 503);
  const cliOn = await agt('--json', 'extensions', 'on', 'telemetry');
  t.equal(cliOn.code, 0, cliOn.stderr);
  t.match(JSON.parse(cliOn.stdout), { name: 'telemetry', enabled: true, restartRequired: true });
});
