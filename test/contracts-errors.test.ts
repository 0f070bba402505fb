import t from 'tap';
import { mkdtempSync, cpSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgtError, ERROR_STATUS } from '../contracts/errors.js';
import { importFile, ROOT } from './helpers/daemon.js';

t.test('AgtError maps codes to statuses and keeps details out of error/code', async (t) => {
  const error = new AgtError('name_taken', 'taken', { details: { error: 'x', code: 'y', agentId: 'a' } });
  t.equal(error.statusCode, ERROR_STATUS.name_taken);
  t.same(error.toBody(), { error: 'taken', code: 'name_taken', agentId: 'a' });
  t.equal(new AgtError('my_code', 'custom').statusCode, 500, 'unknown code without status is a 500');
  t.equal(new AgtError('my_code', 'custom', { status: 418 }).statusCode, 418);
});

t.test('an AgtError from another copy of the contracts is still an AgtError', async (t) => {
  // A third-party extension package may bundle its own copy of contracts/.
  const dir = mkdtempSync(join(tmpdir(), 'agt-contracts-copy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(ROOT, 'contracts/errors.ts'), join(dir, 'errors.ts'));
  const copy = await importFile<typeof import('../contracts/errors.js')>(join(dir, 'errors.ts'));
  t.not(copy.AgtError, AgtError, 'a distinct class');
  const foreign = new copy.AgtError('conflict', 'from the copy');
  t.ok(foreign instanceof AgtError);
  t.notOk(new Error('plain') instanceof AgtError);
  t.notOk((null as unknown as object) instanceof AgtError);
});
