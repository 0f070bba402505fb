/**
 * `contracts/` as the package `@agt/contracts`: one entry point (the same modules the kernel imports by
 * name) plus `./testing`, no deep path, publishable, one version, the built daemon's copy
 * for plain Node; and the import boundaries of .dependency-cruiser.cjs catch what they are for.
 */
import t from 'tap';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { promisify } from 'node:util';
import { CONTRACT_VERSION } from '../contracts/extension.js';
import { ROOT, tempDir } from './helpers/daemon.js';

const run = promisify(execFile);
const CONTRACTS = join(ROOT, 'contracts');
const modules = readdirSync(CONTRACTS)
  .filter((name) => name.endsWith('.ts'))
  .map((name) => name.slice(0, -3));

/**
 * Modules without values: `logger` and `agent-config` declare types only (the agent-config schema is the
 * kernel's, kernel/agents/config-schema.ts).
 */
const NOT_RE_EXPORTED = new Set(['index', 'logger', 'agent-config']);

t.test(
  'one entry point plus ./testing: every contract module is reached through @agt/contracts, no deep path',
  async (t) => {
    t.equal(
      await import('@agt/contracts'),
      await import('../contracts/index.js'),
      'the entry point is contracts/index.ts',
    );
    const entry = (await import('@agt/contracts')) as Record<string, unknown>;
    for (const name of modules.filter((module) => !NOT_RE_EXPORTED.has(module))) {
      const byPath = (await import(`../contracts/${name}.js`)) as Record<string, unknown>;
      for (const [exported, value] of Object.entries(byPath))
        t.equal(entry[exported], value, `${name}: ${exported} through the entry point`);
    }
    t.ok((await import('@agt/contracts/testing')).startTestExtension, './testing');
    // Node's error (code ERR_PACKAGE_PATH_NOT_EXPORTED), or the same reported by another loader in the chain.
    for (const deep of ['@agt/contracts/errors', '@agt/contracts/testing/fake-kernel', '@agt/contracts/package.json']) {
      await t.rejects(
        import(deep),
        /ERR_PACKAGE_PATH_NOT_EXPORTED|is not defined by "exports"/,
        `${deep} is not exported`,
      );
    }
  },
);

t.test(
  'publishable: not private, a semver version with its CHANGELOG entry, exports . and ./testing only',
  async (t) => {
    const pkg = JSON.parse(readFileSync(join(CONTRACTS, 'package.json'), 'utf8')) as {
      private?: boolean;
      version: string;
      exports: Record<string, unknown>;
    };
    t.not(pkg.private, true);
    t.match(pkg.version, /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    t.same(Object.keys(pkg.exports), ['.', './testing']);
    t.match(
      readFileSync(join(CONTRACTS, 'CHANGELOG.md'), 'utf8'),
      new RegExp(`^## ${pkg.version.replaceAll('.', '\\.')}\\b`, 'm'),
    );
  },
);

t.test("one version: CONTRACT_VERSION is the package version's major.minor", async (t) => {
  const { version } = JSON.parse(readFileSync(join(CONTRACTS, 'package.json'), 'utf8')) as { version: string };
  t.equal(CONTRACT_VERSION, version.split('.').slice(0, 2).join('.'));
});

t.test(
  "plain Node (a built daemon, a JavaScript extension) gets the build, sharing the kernel's classes",
  { skip: !existsSync(join(ROOT, 'dist/contracts/index.js')) && 'no build in dist/ (npm test builds it)' },
  async (t) => {
    const script = `
    const out = { index: import.meta.resolve('@agt/contracts'), testing: import.meta.resolve('@agt/contracts/testing') };
    const all = await import('@agt/contracts');
    const errors = await import('./dist/contracts/errors.js');
    out.sameClass = all.AgtError === errors.AgtError;
    console.log(JSON.stringify(out));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '' },
    });
    const resolved = JSON.parse(stdout) as Record<string, string | boolean>;
    t.equal(resolved.index, `file://${ROOT}/dist/contracts/index.js`);
    t.equal(resolved.testing, `file://${ROOT}/dist/contracts/testing/index.js`);
    t.equal(resolved.sameClass, true, 'the entry points share one AgtError');
    const defining = readdirSync(join(ROOT, 'dist'), { recursive: true, encoding: 'utf8' }).filter(
      (file) =>
        file.endsWith('.js') && readFileSync(join(ROOT, 'dist', file), 'utf8').includes('agt.contracts.AgtError'),
    );
    t.equal(
      defining.length,
      1,
      `AgtError is defined once in the build (${defining.join(', ')}), for the kernel and the extensions alike`,
    );
  },
);

t.test('the boundary rules catch what they are for', async (t) => {
  const dir = tempDir(t, 'agt-depcruise-');
  const write = (path: string, text: string) => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  write(
    'package.json',
    JSON.stringify({
      name: 'probe',
      private: true,
      type: 'module',
      workspaces: ['contracts'],
      devDependencies: { ws: '*' },
    }),
  );
  write(
    'tsconfig.json',
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
  );
  cpSync(join(CONTRACTS, 'package.json'), join(dir, 'contracts/package.json'));
  write('contracts/index.ts', 'export const x = 1;\n');
  write('contracts/errors.ts', "import '../kernel/a.js';\nexport const y = 2;\n");
  write('kernel/a.ts', "import { b } from './b.js';\nexport const a = b;\n");
  write('kernel/b.ts', "import type { a } from './a.js';\nexport const b = 1 as typeof a;\n");
  write('kernel/credentials/c.ts', 'export const c = 1;\n');
  write('kernel/agents/d.ts', "import { c } from '../credentials/c.js';\nexport const d = c;\n");
  write('kernel/runtime/r.ts', 'export const r = 1;\n');
  write('kernel/spend/s.ts', "import { r } from '../runtime/r.js';\nexport const s = r;\n");
  write('kernel/agents/e.ts', "import { r } from '../runtime/r.js';\nexport const e = r;\n");
  write('kernel/extensions/g.ts', "import type { r } from '../runtime/r.js';\nexport const g = 1 as typeof r;\n");
  write('kernel/settings.ts', "import { s } from './spend/s.js';\nexport const settings = s;\n");
  write(
    'kernel/by-name.ts',
    "import { x } from '@agt/contracts';\nimport pkg from '../contracts/package.json' with { type: 'json' };\nexport const n = [x, pkg];\n",
  );
  write('kernel/by-path.ts', "import { x } from '../contracts/index.js';\nexport const p = x;\n");
  write('kernel/lazy.ts', "export const load = () => import('ws');\n");
  write('kernel/typed.ts', "import type { WebSocket } from 'ws';\nexport type Socket = WebSocket;\n");
  write('extensions/good/index.ts', "import { x } from '@agt/contracts';\nexport default x;\n");
  write(
    'extensions/bad/index.ts',
    "import { x } from '../../contracts/index.js';\nimport { a } from '../../kernel/a.js';\nexport default x + a;\n",
  );
  mkdirSync(join(dir, 'node_modules/@agt'), { recursive: true });
  symlinkSync('../../contracts', join(dir, 'node_modules/@agt/contracts'));
  // A copy: a link would resolve to the checkout's node_modules, outside the probe.
  cpSync(join(ROOT, 'node_modules/ws'), join(dir, 'node_modules/ws'), { recursive: true });

  const cruise = await run(
    join(ROOT, 'node_modules/.bin/depcruise'),
    ['--config', join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'json', '.'],
    { cwd: dir, maxBuffer: 16 * 1024 * 1024 },
  ).catch((error: { stdout: string }) => error);
  const { summary } = JSON.parse(cruise.stdout) as {
    summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> };
  };
  const found = summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
  t.same(
    found.filter((line) => !line.startsWith('no-circular')),
    [
      'contracts-stand-alone: contracts/errors.ts -> kernel/a.ts',
      'extension-imports-contracts-by-path: extensions/bad/index.ts -> contracts/index.ts',
      'extension-imports-kernel: extensions/bad/index.ts -> kernel/a.ts',
      'kernel-agents-below-runtime: kernel/agents/e.ts -> kernel/runtime/r.ts',
      'kernel-extensions-below-runtime: kernel/extensions/g.ts -> kernel/runtime/r.ts',
      'kernel-folder-layers: kernel/agents/d.ts -> kernel/credentials/c.ts',
      'kernel-imports-contracts-by-name: kernel/by-path.ts -> contracts/index.ts',
      'kernel-settings-below-spend: kernel/settings.ts -> kernel/spend/s.ts',
      'kernel-spend-below-runtime: kernel/spend/s.ts -> kernel/runtime/r.ts',
      'shipped-code-imports-no-dev-dependency: kernel/lazy.ts -> node_modules/ws/wrapper.mjs',
    ],
    'each boundary rule fires; @agt/contracts by name and a type-only import of a devDependency pass',
  );
  t.match(
    found.filter((line) => line.startsWith('no-circular')),
    [/^no-circular: kernel\/[ab]\.ts -> kernel\/[ab]\.ts$/],
    'a type-only import closes a circle too',
  );
});

/**
 * Every name the two entry points export, with its stability tier: the release tag at its declaration,
 * `@public` (stable) or `@beta` (experimental) (docs/extensions.md "Stability"). Read with the TypeScript
 * checker, so a name re-exported through `export *` or declared as both a value and a type counts once.
 */
const RELEASE_TAGS: Record<string, string | undefined> = {
  public: 'stable',
  beta: 'experimental',
  alpha: 'alpha',
  internal: 'internal',
};
const ENTRIES = [join(CONTRACTS, 'index.ts'), join(CONTRACTS, 'testing/index.ts')];
let checked: { program: ts.Program; checker: ts.TypeChecker } | undefined;
/** One program of the package for the checks below (~2 s to make). */
function contractsProgram() {
  if (!checked) {
    const program = ts.createProgram(ENTRIES, {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      noEmit: true,
      skipLibCheck: true,
      noResolve: false,
      customConditions: ['agt-source'],
    });
    checked = { program, checker: program.getTypeChecker() };
  }
  return checked;
}
const resolved = (checker: ts.TypeChecker, symbol: ts.Symbol) =>
  symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;

function exportedTiers(): Map<string, string[]> {
  const entries = ENTRIES;
  const { program, checker } = contractsProgram();
  const tiers = new Map<string, string[]>();
  for (const [i, entry] of entries.entries()) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const tags = (symbol.declarations ?? []).flatMap((declaration) =>
        ts.getJSDocTags(ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration),
      );
      const found = tags.map((tag) => RELEASE_TAGS[tag.tagName.text]).filter((tier) => tier !== undefined);
      tiers.set(`${i === 0 ? '' : 'testing:'}${exported.name}`, [...new Set(found)]);
    }
  }
  return tiers;
}

t.test('stability per name: every exported name carries exactly one tier, stable or experimental', async (t) => {
  const tiers = exportedTiers();
  t.ok(tiers.size > 100, `${tiers.size} exported names`);
  const untagged = [...tiers]
    .filter(([, found]) => found.length !== 1 || !['stable', 'experimental'].includes(found[0]!))
    .map(([name, found]) => `${name} (${found.join(', ') || 'no tag'})`);
  t.same(untagged, [], 'no name without a tier, none with two');
  t.same(tiers.get('defineExtension'), ['stable']);
  t.same(tiers.get('testing:runContractSuite'), ['experimental']);
  const listed = readFileSync(join(ROOT, 'docs/extensions.md'), 'utf8');
  const experimental = [...tiers]
    .filter(([, found]) => found[0] === 'experimental')
    .map(([name]) => name.replace(/^testing:/, ''));
  const unlisted = experimental.filter((name) => !listed.includes(`\`${name}\``));
  const counted = /Of the (\d+) names, (\d+) are stable/.exec(listed);
  t.same(
    counted && [Number(counted[1]), Number(counted[2])],
    [tiers.size, tiers.size - experimental.length],
    'docs/extensions.md counts the names and the stable ones',
  );
  t.same(unlisted, [], 'docs/extensions.md names every experimental export');
});

t.test(
  'contracts/ is exactly the package: every name a contract module exports is reachable from an entry point',
  async (t) => {
    const { program, checker } = contractsProgram();
    const reachable = new Set(
      ENTRIES.flatMap((entry) =>
        checker
          .getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(entry)!)!)
          .map((s) => resolved(checker, s)),
      ),
    );
    const stray: string[] = [];
    // The harness's own modules (testing/) share helpers among themselves; every other module is the contract.
    for (const file of modules.filter((name) => name !== 'index').map((name) => join(CONTRACTS, `${name}.ts`))) {
      const module = checker.getSymbolAtLocation(program.getSourceFile(file)!);
      for (const exported of module ? checker.getExportsOfModule(module) : []) {
        if (!reachable.has(resolved(checker, exported)))
          stray.push(`${file.slice(CONTRACTS.length + 1)}: ${exported.name}`);
      }
    }
    t.same(stray, [], 'what only the kernel uses lives in kernel/ (docs/architecture.md)');
  },
);
