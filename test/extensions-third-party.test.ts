/**
 * A third-party extension packaged on its own (`test/fixtures/extensions/third-party`, package
 * `agt-ext-hello`): loaded by absolute path, and by package name from a `node_modules` folder next to
 * a manifest that lives outside this project.
 */
import t, { type Test } from 'tap';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runDaemon, tempDir, type DaemonClient } from './helpers/daemon.js';
import { daemonStarted } from './helpers/daemon-started.js';

const PACKAGE_DIR = join(ROOT, 'test/fixtures/extensions/third-party');

async function expectServing(t: Test, d: DaemonClient, module: string) {
  await daemonStarted(t, d);
  const rows = (await d.request('GET', '/runtime/extensions')).body.extensions;
  t.match(rows, [
    { name: 'third-party-hello', version: '1.0.0', loaded: true, error: null, module, prefix: '/third-party-hello' },
  ]);
  const res = await d.request('GET', '/third-party-hello');
  t.equal(res.status, 200);
  t.same(res.body, { from: 'agt-ext-hello', name: 'third-party-hello' });
}

t.test('by absolute path to the package folder', async (t) => {
  const d = await runDaemon(t, { extensions: { extensions: [{ name: 'third-party-hello', module: PACKAGE_DIR }] } });
  await expectServing(t, d, PACKAGE_DIR);
});

t.test("by package name, resolved from the manifest's folder", async (t) => {
  const project = tempDir(t, 'agt-third-party-');
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(PACKAGE_DIR, join(project, 'node_modules', 'agt-ext-hello'), 'dir');
  // The manifest sits in a sub-folder: node_modules folders are searched upwards from it.
  mkdirSync(join(project, 'config'));
  const manifest = join(project, 'config', 'extensions.json');
  writeFileSync(manifest, JSON.stringify({ extensions: [{ name: 'third-party-hello', module: 'agt-ext-hello' }] }));
  const d = await runDaemon(t, { env: { AGT_EXTENSIONS: manifest } });
  await expectServing(t, d, 'agt-ext-hello');
});
