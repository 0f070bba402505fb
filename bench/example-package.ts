/**
 * `npm run bench:example`: examples/hello-extension tested the way a third party would, outside this
 * checkout. It builds agt, packs `agt` and `@agt/contracts` with `npm pack`, unpacks both tarballs into
 * `node_modules/` of a temporary folder holding a copy of the example, links the other packages from this
 * checkout's node_modules (offline: nothing is downloaded), and runs the example's own tests there
 * (startTestExtension, startTestDaemon against the installed agt, and the contract suite). Slow (a build
 * and two packs), so it lives in bench/ and runs on demand, not in `npm test`; it exits non-zero on failure.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const run = (command: string, args: string[], cwd: string) => execFileSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });

const work = mkdtempSync(join(tmpdir(), 'agt-example-package-'));
try {
  run(process.execPath, ['scripts/build.mjs', '--quiet'], ROOT);
  // --ignore-scripts: the build above is the package's content; `prepare` would build again.
  const pack = (dir: string) => (JSON.parse(run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], dir)) as Array<{ filename: string }>)[0]!.filename;
  const agtTarball = join(work, pack(ROOT));
  // contracts/dist is a link into the daemon's build, whose modules share chunks with the kernel: the
  // package is packed from a copy whose dist/ is built on its own (both entry points, dependencies left
  // as imports), as a publish step does.
  const contractsStage = join(work, 'contracts-stage');
  cpSync(join(ROOT, 'contracts'), contractsStage, { recursive: true, filter: (path) => !path.endsWith('/contracts/dist') });
  await build({
    entryPoints: { index: join(ROOT, 'contracts/index.ts'), 'testing/index': join(ROOT, 'contracts/testing/index.ts') },
    outdir: join(contractsStage, 'dist'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    logLevel: 'error',
  });
  const contractsTarball = join(work, pack(contractsStage));

  const app = join(work, 'hello-extension');
  cpSync(join(ROOT, 'examples/hello-extension'), app, { recursive: true, filter: (path) => !path.includes('node_modules') });
  const modules = join(app, 'node_modules');
  for (const [tarball, into] of [[agtTarball, 'agt'], [contractsTarball, '@agt/contracts']] as const) {
    mkdirSync(join(modules, into), { recursive: true });
    run('tar', ['-xzf', tarball, '-C', join(modules, into), '--strip-components=1'], work);
  }
  // Every other package from this checkout's node_modules, linked (what `npm install --offline` would copy).
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry === 'agt' || entry === '.bin' || entry.startsWith('.')) continue;
    if (entry.startsWith('@')) {
      mkdirSync(join(modules, entry), { recursive: true });
      for (const scoped of readdirSync(join(ROOT, 'node_modules', entry))) {
        if (entry === '@agt' && scoped === 'contracts') continue;
        symlinkSync(join(ROOT, 'node_modules', entry, scoped), join(modules, entry, scoped));
      }
    } else {
      symlinkSync(join(ROOT, 'node_modules', entry), join(modules, entry));
    }
  }
  const started = Date.now();
  const out = run(join(ROOT, 'node_modules/.bin/tap'), ['--disable-coverage', '--allow-incomplete-coverage', '--reporter=tap', '--node-arg=--import=tsx', '--plugin=!@tapjs/typescript', ...readdirSync(join(app, 'test')).filter((file) => file.endsWith('.test.ts')).map((file) => `test/${file}`)], app);
  console.log(out.trim().split('\n').slice(-3).join('\n'));
  console.log(`example-package: the example's tests passed against the packed agt and @agt/contracts (${Date.now() - started} ms)`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
