/**
 * examples/hello-extension tested the way a third party would, outside this checkout: `agt` and `@agt/contracts` are
 * packed with `npm pack` (scripts/pack-packages.mjs: what a publish would upload), unpacked into `node_modules/` of a
 * temporary folder holding a copy of the example, the other packages linked from this checkout's node_modules (what an
 * offline `npm install` would copy: nothing is downloaded), and the example's own test files run there with plain Node,
 * all in one process (startTestExtension, startTestDaemon against the installed agt, the contract suite). It packs the
 * build `npm test` made (dist/); `npm run bench:example` builds first.
 */
import t from 'tap';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pathToFileURL } from 'node:url';
import { ROOT, tempDir } from './helpers/daemon.js';

const run = promisify(execFile);
/** Every package of this checkout's node_modules but the two under test, linked into `modules`. */
function linkDependencies(modules: string): void {
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry === 'agt' || entry === '.bin' || entry.startsWith('.')) continue;
    if (!entry.startsWith('@')) {
      symlinkSync(join(ROOT, 'node_modules', entry), join(modules, entry));
      continue;
    }
    mkdirSync(join(modules, entry), { recursive: true });
    for (const scoped of readdirSync(join(ROOT, 'node_modules', entry))) {
      if (entry === '@agt' && scoped === 'contracts') continue;
      symlinkSync(join(ROOT, 'node_modules', entry, scoped), join(modules, entry, scoped));
    }
  }
}

t.test(
  'the example extension passes its tests against the packed agt and @agt/contracts',
  { skip: !existsSync(join(ROOT, 'dist/kernel')) && 'no build in dist/ (npm test builds it)' },
  async (t) => {
    const work = tempDir(t, 'agt-example-package-');
    // The script, as console-browser loads scripts/build-console.mjs (a plain .mjs without types).
    // cleanEnv: no tap variables (a nested tap would report to this run).
    const { packPackages, cleanEnv } = (await import(pathToFileURL(join(ROOT, 'scripts/pack-packages.mjs')).href)) as {
      packPackages(into: string): Promise<{ agt: string; contracts: string }>;
      cleanEnv(): Record<string, string>;
    };
    const { agt, contracts } = await packPackages(work);

    const app = join(work, 'hello-extension');
    cpSync(join(ROOT, 'examples/hello-extension'), app, {
      recursive: true,
      filter: (path) => !path.includes('node_modules'),
    });
    const modules = join(app, 'node_modules');
    for (const [tarball, into] of [
      [agt, 'agt'],
      [contracts, '@agt/contracts'],
    ] as const) {
      mkdirSync(join(modules, into), { recursive: true });
      await run('tar', ['-xzf', tarball, '-C', join(modules, into), '--strip-components=1']);
    }
    linkDependencies(modules);

    // The example resolves both packages inside its own folder, never this checkout.
    const where = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "console.log(JSON.stringify([import.meta.resolve('@agt/contracts'), import.meta.resolve('@agt/contracts/testing'), import.meta.resolve('agt/package.json')]))",
      ],
      { cwd: app, env: cleanEnv() },
    );
    for (const resolved of JSON.parse(where.stdout) as string[])
      t.ok(
        resolved.startsWith(`file://${modules}/`),
        `${resolved.slice(`file://${work}`.length)} is the unpacked package`,
      );

    // The test files are plain Node programs (tap's test API), run through tsx as the example's devDependency
    // does. All of them in one process, one after the other: each of their tests still runs against the
    // installed packages, and the process loads tsx, tap and the daemon once (a process per file cost ~3 s
    // of CPU more); a failing test names itself in the output shown.
    const files = readdirSync(join(app, 'test'))
      .filter((file) => file.endsWith('.test.ts'))
      .sort();
    t.ok(files.length >= 2, `the example's tests: ${files.join(', ')}`);
    const imports = files.map((file) => `await import(${JSON.stringify(`./test/${file}`)});`).join(' ');
    const result = await run(process.execPath, ['--import=tsx', '--input-type=module', '-e', imports], {
      cwd: app,
      env: cleanEnv(),
      maxBuffer: 16 * 1024 * 1024,
    }).then(
      ({ stdout }) => ({ ok: true, out: stdout }),
      (error: { stdout?: string; stderr?: string }) => ({
        ok: false,
        out: `${error.stdout ?? ''}\n${error.stderr ?? ''}`,
      }),
    );
    const summary = /^# (\{ total: .*\})$/m.exec(result.out)?.[1] ?? '';
    t.ok(
      result.ok,
      `${files.join(' and ')} pass${
        result.ok
          ? ` ${summary}`
          : `:\n${result.out
              .split('\n')
              .filter((line) => /not ok|Error|error/.test(line))
              .slice(0, 20)
              .join('\n')}`
      }`,
    );
  },
);
