/** The user template shown in docs/templates.md is a real, valid template. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parseTemplate } from '../kernel/templates/parse.js';
import { ROOT } from './helpers/daemon.js';

t.test('the documented researcher template parses and validates', async (t) => {
  const page = readFileSync(join(ROOT, 'docs/templates.md'), 'utf8');
  const json = /researcher\.json <<'JSON'\n([\s\S]*?)\nJSON\n/.exec(page)?.[1];
  t.ok(json, 'the example is on the page');
  const parsed = parseTemplate('researcher', Buffer.from(json!));
  t.equal(parsed.error, null);
  t.equal(parsed.name, 'Researcher');
  t.match(parsed.config, { agt_version: '0.2', model: { provider: 'local' }, tools: Array });
});
