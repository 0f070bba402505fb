/**
 * The loader's building blocks without a daemon where possible: manifest validation (start-up errors
 * name the file and the field), module resolution, dependency order and cycles, the contract version
 * rule, config validation; plus the built daemon refusing to start on a malformed or missing manifest.
 */
import t from 'tap';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { contractSatisfied, definitionProblem, validateConfig } from '../kernel/extensions/definition.js';
import { contractProblem } from '../kernel/extensions/contract-check.js';
import { readManifest } from '../kernel/extensions/manifest.js';
import { readOverlay, writeOverlayEntry } from '../kernel/extensions/config-overlay.js';
import { orderByDependencies } from '../kernel/extensions/order.js';
import { resolveExtensionModule } from '../kernel/extensions/resolve-module.js';
import { stopShare } from '../kernel/extensions/lifecycle.js';
import hello from './fixtures/extensions/hello/index.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';

t.test('manifest: defaults, missing files, and errors naming file and field', async (t) => {
  const dir = tempDir(t);
  const write = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const ok = write('ok.json', JSON.stringify({ extensions: [{ name: 'a', module: './a.js' }] }));
  t.same(readManifest(ok, { required: true }), [{ name: 'a', module: './a.js', enabled: true, config: {} }]);
  t.same(
    readManifest(join(dir, 'absent.json'), { required: false }),
    [],
    'a missing default manifest means no extensions',
  );
  t.throws(() => readManifest(join(dir, 'absent.json'), { required: true }), {
    name: 'StartupError',
    message: /absent\.json: cannot read it: the file does not exist/,
  });

  const cases: Array<[string, string, RegExp]> = [
    ['bad-json.json', '{"extensions": [', /bad-json\.json: not valid JSON/],
    [
      'no-module.json',
      JSON.stringify({ extensions: [{ name: 'a' }] }),
      /no-module\.json: \/extensions\/0\/module: is required/,
    ],
    [
      'typo.json',
      JSON.stringify({ extensions: [{ name: 'a', module: 'm', enable: false }] }),
      /\/extensions\/0\/enable: unknown property/,
    ],
    [
      'bad-type.json',
      JSON.stringify({ extensions: [{ name: 'a', module: 'm', enabled: 'no' }] }),
      /\/extensions\/0\/enabled: /,
    ],
    ['bad-name.json', JSON.stringify({ extensions: [{ name: 'Bad Name', module: 'm' }] }), /\/extensions\/0\/name: /],
    [
      'bad-prefix.json',
      JSON.stringify({ extensions: [{ name: 'a', module: 'm', prefix: 'x/' }] }),
      /\/extensions\/0\/prefix: /,
    ],
    ['not-list.json', JSON.stringify({ extensions: {} }), /\/extensions: /],
    [
      'dup.json',
      JSON.stringify({
        extensions: [
          { name: 'a', module: 'm' },
          { name: 'a', module: 'n' },
        ],
      }),
      /\/extensions\/1\/name: "a" is already used by \/extensions\/0/,
    ],
  ];
  for (const [name, content, message] of cases) {
    t.throws(() => readManifest(write(name, content), { required: true }), { name: 'StartupError', message }, name);
  }
});

t.test('a malformed manifest refuses the daemon start', async (t) => {
  const malformed = await runDaemon(t, { extensions: { extensions: [{ name: 'x', modul: './x.js' }] } });
  t.equal(malformed.url, '', 'it never listens');
  t.not(await malformed.exited, 0, 'it exits with a failure');
  t.match(
    malformed.stderr(),
    /extension manifest .*extensions\.test\.json: .*\/extensions\/0\/modul: unknown property/,
    'naming the file and the field',
  );
  const missing = join(tempDir(t), 'nope.json');
  const absent = await runDaemon(t, { env: { AGT_EXTENSIONS: missing } });
  t.equal(absent.url, '');
  t.not(await absent.exited, 0);
  t.match(absent.stderr(), /nope\.json: cannot read it/);
});

t.test("the owner's options overlay: read, written beside the others, malformed ones refuse the start", async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'extensions.config.json');
  t.same(readOverlay(path), { extensions: {} }, 'no file: no overlay');
  writeOverlayEntry(path, 'channels', { reconnectBaseMs: 10 });
  writeOverlayEntry(path, 'compute', { memoryMb: 256 });
  writeOverlayEntry(path, 'channels', { reconnectBaseMs: 20 });
  t.same(readOverlay(path), {
    extensions: { channels: { config: { reconnectBaseMs: 20 } }, compute: { config: { memoryMb: 256 } } },
  });
  t.equal(statSync(path).mode & 0o777, 0o600, 'owner-only');
  writeFileSync(path, JSON.stringify({ extensions: { channels: { options: {} } } }));
  t.throws(() => readOverlay(path), {
    name: 'StartupError',
    message: /extensions\.config\.json: .*\/extensions\/channels\/options: unknown property/,
  });
  writeFileSync(path, '{');
  t.throws(() => readOverlay(path), { message: /extensions\.config\.json: not valid JSON/ });
  const manifest = { extensions: [{ name: 'hello', module: join(ROOT, 'test/fixtures/extensions/hello/index.ts') }] };
  const refused = await runDaemon(t, { dataDir: dir, extensions: manifest });
  t.equal(refused.url, '', "the daemon does not start with options other than the owner's");
  t.not(await refused.exited, 0);
  t.match(refused.stderr(), /extensions\.config\.json: not valid JSON/, 'naming the file');
});

t.test('module resolution', async (t) => {
  const dir = tempDir(t);
  const manifest = join(dir, 'extensions.json');
  const file = (path: string, content = 'export default {}') => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
    return join(dir, path);
  };
  const ts = file('ext/one/index.ts');
  t.equal(resolveExtensionModule('./ext/one/index.js', manifest), ts, '.js names its TypeScript twin');
  t.equal(resolveExtensionModule('./ext/one', manifest), ts, 'a folder without package.json: its index');
  t.equal(resolveExtensionModule(ts, manifest), ts, 'absolute path');
  t.equal(resolveExtensionModule(`file://${ts}`, manifest), ts, 'file URL');

  const esmOnly = file('node_modules/esm-only/lib/main.mjs');
  file(
    'node_modules/esm-only/package.json',
    JSON.stringify({ name: 'esm-only', exports: { '.': { import: './lib/main.mjs' }, './extra': './lib/extra.js' } }),
  );
  const extra = file('node_modules/esm-only/lib/extra.js');
  t.equal(resolveExtensionModule('esm-only', manifest), esmOnly, 'import condition of exports');
  t.equal(resolveExtensionModule('esm-only/extra', manifest), extra, 'exported subpath');
  t.throws(() => resolveExtensionModule('esm-only/hidden', manifest), { message: /does not export "\.\/hidden"/ });

  // Node's full exports rules (resolve.exports): subpath patterns, and the require conditions after the import ones.
  const patterned = file('node_modules/patterned/src/plugins/audit.js');
  file(
    'node_modules/patterned/package.json',
    JSON.stringify({ name: 'patterned', exports: { './plugins/*': { node: './src/plugins/*.js' } } }),
  );
  t.equal(resolveExtensionModule('patterned/plugins/audit', manifest), patterned, 'subpath pattern');
  const cjs = file('node_modules/cjs-only/index.cjs');
  file('node_modules/cjs-only/package.json', JSON.stringify({ name: 'cjs-only', exports: { require: './index.cjs' } }));
  t.equal(resolveExtensionModule('cjs-only', manifest), cjs, 'require condition when nothing matches import');

  const scoped = file('node_modules/@acme/agt-ext/dist/index.js');
  file('node_modules/@acme/agt-ext/package.json', JSON.stringify({ name: '@acme/agt-ext', main: 'dist/index.js' }));
  t.equal(
    resolveExtensionModule('@acme/agt-ext', join(dir, 'deeper/still/extensions.json')),
    scoped,
    'scoped, found upwards via main',
  );

  t.throws(() => resolveExtensionModule('./missing.js', manifest), {
    message: /^cannot resolve module "\.\/missing\.js": .*missing\.js does not exist/,
  });
  t.throws(() => resolveExtensionModule('not-installed', manifest), {
    message: /package not found in any node_modules folder/,
  });
});

t.test('dependency order and cycles', async (t) => {
  const { order, cycles } = orderByDependencies([
    { name: 'c', dependsOn: ['b'] },
    { name: 'b', dependsOn: ['a', 'unknown'] },
    { name: 'a', dependsOn: [] },
    { name: 'x', dependsOn: ['y'] },
    { name: 'y', dependsOn: ['z'] },
    { name: 'z', dependsOn: ['x'] },
    { name: 'w', dependsOn: ['x'] },
  ]);
  t.same(
    order.filter((n) => 'abc'.includes(n)),
    ['a', 'b', 'c'],
  );
  t.same(order.length, 7, 'every node placed once');
  t.same(
    Object.fromEntries(cycles),
    { x: 'x -> y -> z -> x', y: 'x -> y -> z -> x', z: 'x -> y -> z -> x' },
    'w depends on a cycle but is not in it',
  );
});

t.test('contract versions: same major, minor not newer', async (t) => {
  t.ok(contractSatisfied('1.0', '1.0'));
  t.ok(contractSatisfied('1.0', '1.2'));
  t.ok(contractSatisfied('1.2.3', '1.2'));
  t.notOk(contractSatisfied('1.3', '1.2'));
  t.notOk(contractSatisfied('2.0', '1.0'));
  t.notOk(contractSatisfied('0.9', '1.0'));
});

t.test('definition shape and config', async (t) => {
  t.equal(definitionProblem(hello, 'hello'), null);
  t.match(definitionProblem(undefined, 'x'), /no default export/);
  t.match(definitionProblem({ ...hello, register: 'no' }, 'hello'), /\/register: must be a function/);
  t.match(definitionProblem({ ...hello, version: 'one' }, 'hello'), /\/version: "one" is not a semver version/);
  t.match(definitionProblem({ ...hello, prefix: '/Bad/' }, 'hello'), /\/prefix: /);
  t.match(definitionProblem({ ...hello, dependsOn: ['hello'] }, 'hello'), /cannot depend on itself/);
  t.same(validateConfig(hello, {}), { config: { greeting: 'hi' } }, 'defaults applied');
  t.same(validateConfig(hello, { greeting: 5 }), { problem: 'invalid config: /greeting: must be string' });
  t.same(validateConfig(hello, { other: 1 }), { problem: 'invalid config: /other: unknown property' });
});

t.test('stop shares keep time for the extensions after a hanging one', async (t) => {
  t.equal(stopShare(20_000, 4), 5_000, 'capped');
  t.equal(stopShare(2_000, 4), 500, 'leaves 500 ms for each later one');
  t.equal(stopShare(100, 4), 25, 'an exhausted budget is split evenly');
  t.equal(stopShare(0, 1), 0);
});

t.test('compatibility: built against 1.0 loads on the next minor and is refused on the next major', async (t) => {
  const dir = tempDir(t, 'agt-contract-');
  const moduleFile = join(dir, 'src', 'index.js');
  mkdirSync(join(dir, 'src'));
  const declare = (pkg: Record<string, unknown>) =>
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'agt-ext-probe', ...pkg }));
  for (const pkg of [{ agtContract: '^1.0.0' }, { peerDependencies: { '@agt/contracts': '^1.0.0' } }]) {
    declare(pkg);
    const how = Object.keys(pkg)[0];
    t.equal(contractProblem('1.0', moduleFile, '1.0.0'), null, `${how}: loads on the same version`);
    t.equal(contractProblem('1.0', moduleFile, '1.1.0'), null, `${how}: loads on the next minor`);
    t.match(
      contractProblem('1.0', moduleFile, '2.0.0'),
      /needs kernel contract 1\.0, but this kernel implements 2\.0/,
      `${how}: the definition's contract is refused on a major`,
    );
    t.match(
      contractProblem('2.0', moduleFile, '2.0.0'),
      new RegExp(
        `built against @agt/contracts \\^1\\.0\\.0 \\(agt-ext-probe ${how}.*\\), but this kernel implements 2\\.0\\.0`,
      ),
      `${how}: the package's range is refused on a major`,
    );
  }
  declare({ peerDependencies: { '@agt/contracts': '*' } });
  t.match(
    contractProblem('1.1', moduleFile, '1.0.0'),
    /needs kernel contract 1\.1/,
    'a newer minor than the kernel is refused',
  );
  declare({});
  t.equal(
    contractProblem('1.0', moduleFile, '1.0.0'),
    null,
    'a package that declares no range is judged by its definition alone',
  );
});
