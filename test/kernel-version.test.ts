import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGT_VERSION } from '../kernel/version.js';
import { ROOT } from './helpers/daemon.js';

t.test('one version: the constant equals package.json', async (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  t.equal(AGT_VERSION, pkg.version);
});
