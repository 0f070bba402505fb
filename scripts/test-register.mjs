/**
 * `--import` of every test process of the test build (scripts/test.mjs): registers scripts/test-hooks.mjs
 * with the tree's layout (read from its `.agt-build.json`).
 */
import { readFileSync } from 'node:fs';
import { register } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const buildRoot = join(ROOT, process.env.AGT_TEST_BUILD_DIR ?? '.test-build');
const info = JSON.parse(readFileSync(join(buildRoot, '.agt-build.json'), 'utf8'));
register('./test-hooks.mjs', import.meta.url, {
  data: { buildRoot, sourceRoot: resolve(buildRoot, info.sourceRoot ?? '..'), sources: info.sources ?? [] },
});
