/**
 * `npm run pack:packages -- <folder>`: the two tarballs a publish would upload, `agt-<version>.tgz` and
 * `agt-contracts-<version>.tgz`, written into <folder> (default: the current folder). They are what a
 * third party installs until the packages are on a registry (docs/extensions.md "From an empty folder"),
 * and what test/example-package.test.ts installs. Packs the current build (dist/): run `npm run build`
 * first when the sources changed.
 *
 * `@agt/contracts` is packed from a staged copy whose dist/ is built on its own (both entry points,
 * dependencies left as imports): in this checkout contracts/dist links into the daemon's build, whose
 * modules share chunks with the kernel.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const run = promisify(execFile);
/** npm outside any test runner's environment (a nested tap would report to its parent). */
export const cleanEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('TAP') && name !== 'NODE_OPTIONS'),
  );

async function pack(dir, into) {
  // --ignore-scripts: the build is the package's content; `prepare` would build again.
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', into], {
    cwd: dir,
    env: cleanEnv(),
    maxBuffer: 64 * 1024 * 1024,
  });
  return join(into, JSON.parse(stdout)[0].filename);
}

async function packContracts(into) {
  const stage = mkdtempSync(join(into, '.contracts-stage-'));
  try {
    cpSync(join(ROOT, 'contracts'), stage, { recursive: true, filter: (path) => !path.endsWith('/contracts/dist') });
    await build({
      entryPoints: {
        index: join(ROOT, 'contracts/index.ts'),
        'testing/index': join(ROOT, 'contracts/testing/index.ts'),
      },
      outdir: join(stage, 'dist'),
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      packages: 'external',
      logLevel: 'error',
    });
    return await pack(stage, into);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** Packs both into `into`; resolves their paths. */
export async function packPackages(into) {
  const [agt, contracts] = await Promise.all([pack(ROOT, into), packContracts(into)]);
  return { agt, contracts };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { agt, contracts } = await packPackages(resolve(process.argv[2] ?? '.'));
  console.log(`${agt}\n${contracts}`);
}
