/**
 * One version: kernel/version.ts reads it from the nearest package.json above the module (the project's
 * in the sources, in dist/ and in the test build), and the daemon shows that one. The copies in temporary
 * folders prove it is read, not written into the module: comparing the constant with the project's
 * package.json alone would pass for a module that hard-codes today's version.
 */
import t from 'tap';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGT_VERSION } from '../kernel/version.js';
import { importFile, ROOT, runDaemon, tempDir } from './helpers/daemon.js';

/** kernel/version.ts copied to `<dir>/kernel/version.ts` below a package.json of `pkg`; its AGT_VERSION. */
async function versionBelow(t: Parameters<typeof tempDir>[0], pkg: Record<string, unknown>): Promise<string> {
  const dir = tempDir(t, 'agt-version-');
  mkdirSync(join(dir, 'kernel'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg));
  cpSync(join(ROOT, 'kernel/version.ts'), join(dir, 'kernel/version.ts'));
  return (await importFile<{ AGT_VERSION: string }>(join(dir, 'kernel/version.ts'))).AGT_VERSION;
}

t.test('the version is read from the nearest package.json', async (t) => {
  t.equal(await versionBelow(t, { name: 'agt', version: '9.8.7-test.1' }), '9.8.7-test.1');
  await t.rejects(
    versionBelow(t, { name: 'agt' }),
    /has no version/,
    'a package.json without one is an error, not a default',
  );
});

t.test("the daemon's version is the project's package.json", async (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  t.equal(AGT_VERSION, pkg.version);
  // The built daemon (dist/): its version is read there too, not only in the sources.
  const d = await runDaemon(t);
  t.equal((await d.request('GET', '/openapi.json')).body.info.version, pkg.version, '/openapi.json');
});
