/**
 * Templates (D9): the built-in `standard` template is a valid agent config, user templates are read
 * from <dataDir>/templates, review marks bind to the file content, the routes need a ready owner
 * identity, and `resolveTemplate` gives the create-agent route its 422 refusals.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { AgentConfigSchema } from '../contracts/agent-config.js';
import { firstSchemaError } from '../contracts/validate.js';
import { resolveTemplate } from '../kernel/templates/resolve.js';
import { bootDaemon, type TestDaemon } from './helpers/daemon.js';


const D7_TOOLS = [
  'ask', 'say', 'fs_read', 'fs_write', 'fs_list', 'fs_delete', 'db_query', 'db_execute', 'msg_send', 'msg_list',
  'msg_read', 'sys_get_meta', 'sys_set_meta', 'sys_delete_meta', 'sys_set_timer', 'sys_list_timers',
  'sys_delete_timer', 'sys_set_state', 'sys_get_config', 'sys_update_config', 'sys_fetch', 'loop_send',
  'loop_list', 'loop_compact', 'loop_clear',
];

async function readyDaemon(t: Test, settings?: Record<string, unknown>): Promise<TestDaemon> {
  const d = await bootDaemon(t, { settings });
  const created = await d.request('POST', '/identity/create', { passphrase: 'templates test' });
  t.equal(created.status, 201);
  return d;
}

function writeTemplate(d: TestDaemon, id: string, content: unknown): string {
  const path = join(d.dataDir, 'templates', `${id}.json`);
  mkdirSync(join(d.dataDir, 'templates'), { recursive: true });
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

t.test('template routes need a ready owner identity', async (t) => {
  const d = await bootDaemon(t);
  for (const [method, path] of [['GET', '/templates'], ['GET', '/templates/standard'], ['POST', '/templates/standard/review']]) {
    const res = await d.request(method!, path!);
    t.equal(res.status, 409, `${method} ${path}`);
    t.equal(res.body.code, 'identity_not_ready');
    t.match(res.body.identity, { status: 'none', storage: 'file' });
  }
  await d.request('POST', '/identity/create', { passphrase: 'x' });
  await d.request('POST', '/identity/lock');
  const locked = await d.request('GET', '/templates');
  t.equal(locked.body.code, 'identity_not_ready');
  t.equal(locked.body.identity.status, 'locked');
});

t.test('standard is built in, reviewed and a valid agent config with the D7 tools', async (t) => {
  const d = await readyDaemon(t);
  const list = await d.request('GET', '/templates');
  t.equal(list.status, 200);
  t.same(list.body.templates, [
    { id: 'standard', name: 'Standard', description: list.body.templates[0].description, builtin: true, reviewed: true, valid: true },
  ]);
  const one = await d.request('GET', '/templates/standard');
  t.equal(one.status, 200);
  const config = one.body.config;
  t.notOk('id' in config || 'name' in config, 'no id or name in a template');
  t.equal(firstSchemaError(AgentConfigSchema, { ...config, id: 'a1', name: 'Agent' }), null, 'valid AgentConfig once named');
  t.same(config.model, { provider: 'local', model_id: 'llama3.2', temperature: null, max_tokens: null });
  t.same(config.tools.map((tool: { name: string }) => tool.name), D7_TOOLS);
  t.match(config.triggers.on_chat, { enabled: true, targets: [{ scope: 'agent' }] });
  t.equal((await d.request('GET', '/templates/nope')).status, 404);
  t.equal((await d.request('GET', '/templates/nope')).body.code, 'not_found');
});

t.test("standard's model follows the settings' first provider", async (t) => {
  const d = await readyDaemon(t, {
    providers: [
      { id: 'acme', type: 'openai-compatible', name: 'Acme', baseUrl: 'http://127.0.0.1:9/v1', defaultModel: 'acme-large' },
      { id: 'other', type: 'anthropic', name: 'Other', baseUrl: 'http://127.0.0.1:9' },
    ],
  });
  const config = (await d.request('GET', '/templates/standard')).body.config;
  t.match(config.model, { provider: 'acme', model_id: 'acme-large' });
  t.equal(resolveTemplate(d.daemon.kernel, 'standard').config.model.provider, 'acme');
});

t.test('user templates: shapes, invalid files, review marks bound to the content', async (t) => {
  const d = await readyDaemon(t);
  const standard = (await d.request('GET', '/templates/standard')).body.config;
  const researcherPath = writeTemplate(d, 'researcher', {
    name: 'Researcher',
    description: 'Digs through sources',
    config: { ...standard, instructions: 'Research carefully.' },
  });
  writeTemplate(d, 'bare', { ...standard, id: 'old-agent-id', name: 'Copied agent', description: 'copied' });
  writeTemplate(d, 'broken', '{ not json');
  writeTemplate(d, 'nomodel', { name: 'No model', config: { ...standard, model: { provider: 'local' } } });
  writeTemplate(d, 'standard', { name: 'Shadow', config: standard });
  writeTemplate(d, 'bad name!', { name: 'Ignored', config: standard });

  const list = (await d.request('GET', '/templates')).body.templates;
  t.same(list.map((x: { id: string }) => x.id), ['standard', 'bare', 'broken', 'nomodel', 'researcher'], 'builtin first, then by id; reserved and odd names skipped');
  const byId = Object.fromEntries(list.map((x: { id: string }) => [x.id, x]));
  t.match(byId.researcher, { name: 'Researcher', description: 'Digs through sources', builtin: false, reviewed: false, valid: true });
  t.match(byId.bare, { name: 'Copied agent', valid: true });
  t.match(byId.broken, { valid: false, error: /not valid JSON/ });
  t.match(byId.nomodel, { valid: false, error: /model_id/ });
  t.equal(byId.standard.builtin, true);

  const bare = (await d.request('GET', '/templates/bare')).body;
  t.notOk('id' in bare.config || 'name' in bare.config, "a bare config's id and name are dropped");

  const kernel = d.daemon.kernel;
  t.throws(() => resolveTemplate(kernel, 'missing'), { code: 'template_missing', statusCode: 422 });
  t.throws(() => resolveTemplate(kernel, 'broken'), { code: 'template_invalid', statusCode: 422 });
  t.throws(() => resolveTemplate(kernel, 'nomodel'), { code: 'template_invalid', statusCode: 422 });
  t.throws(() => resolveTemplate(kernel, 'researcher'), { code: 'template_unreviewed', statusCode: 422 });

  const reviewed = await d.request('POST', '/templates/researcher/review');
  t.equal(reviewed.status, 200);
  t.match(reviewed.body, { id: 'researcher', reviewed: true });
  t.equal(statSync(join(d.dataDir, 'template-reviews.json')).mode & 0o777, 0o600);
  t.equal((await d.request('GET', '/templates/researcher')).body.reviewed, true);

  const resolved = resolveTemplate(kernel, 'researcher');
  t.equal(resolved.config.instructions, 'Research carefully.');
  resolved.config.instructions = 'mutated';
  t.equal(resolveTemplate(kernel, 'researcher').config.instructions, 'Research carefully.', 'each resolve is a fresh copy');

  // Editing the file voids the mark.
  const edited = JSON.parse(readFileSync(researcherPath, 'utf8'));
  edited.config.instructions = 'Research carelessly.';
  writeFileSync(researcherPath, JSON.stringify(edited));
  t.equal((await d.request('GET', '/templates/researcher')).body.reviewed, false);
  t.throws(() => resolveTemplate(kernel, 'researcher'), { code: 'template_unreviewed' });
  t.equal((await d.request('POST', '/templates/researcher/review')).body.reviewed, true);
  t.equal(resolveTemplate(kernel, 'researcher').config.instructions, 'Research carelessly.');

  const withdrawn = await d.request('DELETE', '/templates/researcher/review');
  t.equal(withdrawn.status, 200);
  t.equal(withdrawn.body.reviewed, false);

  const invalid = await d.request('POST', '/templates/broken/review');
  t.equal(invalid.status, 422);
  t.equal(invalid.body.code, 'template_invalid');
  t.equal((await d.request('POST', '/templates/standard/review')).body.reviewed, true, 'built-ins are reviewed');
  t.equal((await d.request('DELETE', '/templates/standard/review')).status, 409);
  t.equal((await d.request('POST', '/templates/missing/review')).status, 404);
  t.equal(resolveTemplate(kernel, 'standard').builtin, true);
});
