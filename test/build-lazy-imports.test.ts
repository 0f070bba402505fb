/**
 * Every package the built daemon imports lazily works from dist/ with the names the code takes from it.
 * The list comes from the build's own metafile (dist/.agt-metafile.json), not from a hand list: a new
 * `import('pkg')` is covered the day it is added. Each is loaded the way dist/ loads it: kept external
 * (scripts/build.mjs's bundling rule), by Node's loader from the built file's folder; bundled, from its
 * chunk. A bundled CommonJS package whose chunk exports only `default` fails here, as prom-client and the
 * OTLP exporters once did in dist/ while every test of the sources passed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { ROOT } from './helpers/daemon.js';
import { lazyImportsOf } from './helpers/lazy-import-names.js';

interface MetaImport {
  path: string;
  kind: string;
  external?: boolean;
  original?: string;
}
interface Metafile {
  inputs: Record<string, { imports: MetaImport[] }>;
  outputs: Record<string, { entryPoint?: string; inputs: Record<string, unknown> }>;
}

const METAFILE = join(ROOT, 'dist/.agt-metafile.json');
const isPackage = (specifier: string) => !/^(\.|\/|node:|data:|file:)/.test(specifier);

t.test(
  'every lazily imported package gives dist/ the names its code uses',
  { skip: existsSync(METAFILE) ? false : 'no build in dist/ (npm test makes it)' },
  async (t) => {
    const meta = JSON.parse(readFileSync(METAFILE, 'utf8')) as Metafile;
    const outputOf = (input: string) =>
      Object.keys(meta.outputs).find((output) => !output.endsWith('.map') && input in meta.outputs[output]!.inputs);
    const checks: Array<{ where: string; load: string; base: string; names: string[] }> = [];
    for (const [input, { imports }] of Object.entries(meta.inputs)) {
      if (input.includes('node_modules/')) continue;
      const lazy = imports.filter((i) => i.kind === 'dynamic-import' && isPackage(i.original ?? i.path));
      if (lazy.length === 0) continue;
      const used = lazyImportsOf(input, readFileSync(join(ROOT, input), 'utf8'));
      const output = outputOf(input);
      t.ok(output, `${input} is in the build`);
      for (const specifier of new Set(lazy.map((i) => i.original ?? i.path))) {
        const entry = lazy.find((i) => (i.original ?? i.path) === specifier)!;
        const sites = used.filter((u) => u.specifier === specifier);
        if (sites.length === 0)
          t.fail(`import('${specifier}') in ${input}: the build has it, the source's syntax tree does not`);
        // External: Node resolves the specifier from the built file's folder. Bundled: the chunk it became.
        const chunk = entry.external
          ? undefined
          : Object.keys(meta.outputs).find((out) => meta.outputs[out]!.entryPoint === entry.path);
        t.ok(entry.external || chunk, `import('${specifier}') in ${input}: external or a chunk of its own`);
        for (const site of sites) {
          const where = `import('${specifier}') in ${input}:${site.line}`;
          if (site.names.length === 0)
            t.fail(
              `${where}: cannot tell which names the code takes from it; take them by destructuring or property access on a binding (test/helpers/lazy-import-names.ts)`,
            );
          else
            checks.push({
              where,
              load: chunk ? pathToFileURL(join(ROOT, chunk)).href : specifier,
              base: join(ROOT, dirname(output ?? input)),
              names: site.names,
            });
        }
      }
    }
    t.ok(checks.length >= 10, `the build has its lazy imports (${checks.length} found)`);
    t.ok(
      checks.some((c) => c.load === 'prom-client'),
      'prom-client is among them',
    );
    const script = `
    const checks = JSON.parse(process.argv[1]);
    const out = [];
    for (const c of checks) {
      try {
        const m = await import(c.load);
        out.push(c.names.filter((n) => m[n] === undefined));
      } catch (error) {
        out.push(['(import failed: ' + error.message + ')']);
      }
    }
    console.log(JSON.stringify(out));`;
    // One process per folder of built files: a bare specifier in `-e` code resolves from the working folder.
    for (const base of new Set(checks.map((c) => c.base))) {
      const here = checks.filter((c) => c.base === base);
      const missing = JSON.parse(
        execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(here)], {
          cwd: base,
          encoding: 'utf8',
          env: { PATH: process.env.PATH ?? '' },
        }),
      ) as string[][];
      for (const [i, c] of here.entries()) t.same(missing[i], [], `${c.where}: ${c.names.join(', ')}`);
    }
  },
);

t.test('the names a lazy import gives are read off each way the sources write one', async (t) => {
  const names = (code: string) => lazyImportsOf('x.ts', code).map((found) => found.names);
  t.same(names(`const a = (await import('p')).A;`), [['A']], 'a property of the awaited module');
  t.same(names(`const { A, default: d, 'B': b } = await import('p');`), [['A', 'B', 'default']], 'destructuring');
  t.same(
    names(`const m: M = await import('p'); new m.A(); m.b(); function f(m: M) { return m.C; }`),
    [['A', 'C', 'b']],
    'a binding and its uses',
  );
  t.same(
    names(`let s: S | undefined; async function g() { s ??= await import('p'); return new s.A(); }`),
    [['A']],
    '??= on a variable',
  );
  t.same(
    names(`class K { m?: M; async go() { const m = (this.m = await import('p')); m.A; this.m.B; } }`),
    [['A', 'B']],
    'a member and a local',
  );
  t.same(
    names(
      `let p: Promise<M> | undefined; const load = () => (p ??= import('p')); async function h() { const { A } = await load(); }`,
    ),
    [['A']],
    'a loader function',
  );
  t.same(
    names(
      `let e: Promise<M> | undefined; function load() { e ??= import('p').catch(() => undefined as never); return e; } async function h() { (await load()).A; }`,
    ),
    [['A']],
    'a loader with catch',
  );
  t.same(names(`const { A } = cond ? await import('p') : { A: undefined };`), [['A']], 'either branch of ?:');
  t.same(
    names(`import('p').then((m) => m.A); import('q').then(({ B }) => B);`),
    [['A'], ['B']],
    'then with a parameter or a pattern',
  );
  t.same(
    names(
      `const x = () => Promise.all([import('a'), import('b')]).then(([a, b]) => ({ a, b })); async function y() { const { a, b } = await x(); a.A; b.B; }`,
    ),
    [['A'], ['B']],
    'Promise.all taken apart by position',
  );
  t.same(
    names(`type T = typeof import('p'); await import('p');`),
    [[]],
    'a type is not an import; an unused import gives no names',
  );
});
