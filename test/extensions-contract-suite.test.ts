/**
 * (It replaces test/extensions-contract.test.ts, which booted two daemons per extension.)
 * The contract suite of `@agt/contracts/testing` (runContractSuite) run by every extension extensions.json
 * ships, all in the same two daemons (all enabled, all disabled); examples/hello-extension runs it in its own
 * test/contract.test.ts, as a third party would.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runContractSuite } from '@agt/contracts/testing';
import { builtTwin } from '../kernel/extensions/typescript.js';
import { ROOT } from './helpers/daemon.js';

const manifest = JSON.parse(readFileSync(join(ROOT, 'extensions.json'), 'utf8')) as {
  extensions: Array<{ name: string; module: string; config?: Record<string, unknown> }>;
};
const shipped = manifest.extensions.map((entry) => ({
  name: entry.name,
  module: join(ROOT, entry.module),
  config: entry.config ?? {},
}));
// The suite imports each module itself: from the test build, the module's built twin (the same code; a
// `.ts` path made the runner start this file a second time with TypeScript hooks).
const built = (entries: Array<{ module: string }>) =>
  entries.map((entry) => ({ ...entry, module: builtTwin(entry.module) }));

t.test('every shipped extension passes the contract suite', async (t) => {
  t.ok(shipped.length > 0, 'extensions.json ships extensions');
  const checks = await runContractSuite(built(shipped));
  for (const { name, module } of shipped) {
    t.ok(
      checks.some((check) => check.extension === name),
      `${name} was checked`,
    );
    t.equal(module, join(ROOT, 'extensions', name, 'index.ts'), `${name} lives in extensions/${name}/index.ts`);
  }
  for (const check of checks)
    t.ok(check.ok, `${check.extension}: ${check.name}${check.ok ? '' : ` (${check.detail})`}`);
});

t.test('the suite fails what breaks the contract', async (t) => {
  const fixture = (name: string) => join(ROOT, 'test/fixtures/extensions', name, 'index.ts');
  const checks = await runContractSuite(built([{ module: fixture('throws-on-start') }]));
  const failed = checks.filter((check) => !check.ok).map((check) => check.name);
  t.ok(failed.includes('loads'), 'an extension whose start throws does not pass "loads"');
  t.ok(
    failed.some((name) => name.startsWith('answers its listing route')),
    'nor its listing route',
  );
  t.ok(checks.find((check) => check.name.startsWith('answers 503 when off'))?.ok, 'disabled, it still answers 503');
});
