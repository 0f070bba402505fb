/**
 * The contract suite every agt extension passes (`runContractSuite` of `@agt/contracts/testing`): loads,
 * lists, survives its handlers throwing, 503 when off, stops in time, leaves no process or handle.
 */
import { runContractSuite } from '@agt/contracts/testing';
import t from 'tap';
import { fileURLToPath } from 'node:url';

t.test('hello passes the extension contract suite', async (t) => {
  const checks = await runContractSuite([{ module: fileURLToPath(new URL('../src/index.ts', import.meta.url)) }]);
  t.ok(checks.length >= 6, 'every check ran');
  for (const check of checks) t.ok(check.ok, `${check.name}${check.ok ? '' : ` (${check.detail})`}`);
});
