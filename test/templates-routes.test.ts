/**
 * Templates: the built-in `standard` template is a valid agent config, user templates are read
 * from <dataDir>/templates, review marks bind to the file content, the routes need a ready owner
 * identity, and the create-agent route refuses a missing, invalid or unreviewed template with 422.
 * One built daemon: the identity is made (and locked, and unlocked) by the first test.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { AgentConfigSchema } from '../kernel/agents/config-schema.js';
import { firstSchemaError } from '../contracts/validate.js';
import { runDaemon, tempDir, type DaemonClient } from './helpers/daemon.js';

const D7_TOOLS = [
  'ask',
  'say',
  'fs_read',
  'fs_write',
  'fs_list',
  'fs_delete',
  'db_query',
  'db_execute',
  'msg_send',
  'msg_list',
  'msg_read',
  'sys_get_meta',
  'sys_set_meta',
  'sys_delete_meta',
  'sys_set_timer',
  'sys_list_timers',
  'sys_delete_timer',
  'sys_set_state',
  'sys_get_config',
  'sys_update_config',
  'sys_fetch',
  'loop_send',
  'loop_list',
  'loop_compact',
  'loop_clear',
];

const d = await runDaemon(t, { extensions: { extensions: [] } });
const agentsDir = tempDir(t, 'agt-templates-agents-');

function writeTemplate(d: DaemonClient, id: string, content: unknown): string {
  const path = join(d.dataDir, 'templates', `${id}.json`);
  mkdirSync(join(d.dataDir, 'templates'), { recursive: true });
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

/** POST /agents/create from `template`: the answer, and the created agent's config when it was made. */
async function createFrom(template: string) {
  const res = await d.request('POST', '/agents/create', { directory: agentsDir, template });
  const config =
    res.status === 201 ? (await d.request('GET', `/agents/${res.body.agentId}/config`)).body.config : undefined;
  return { ...res, config };
}

t.test('template routes need a ready owner identity', async (t) => {
  for (const [method, path] of [
    ['GET', '/templates'],
    ['GET', '/templates/standard'],
    ['POST', '/templates/standard/review'],
  ]) {
    const res = await d.request(method!, path!);
    t.equal(res.status, 409, `${method} ${path}`);
    t.equal(res.body.code, 'identity_not_ready');
    t.match(res.body.identity, { status: 'none', storage: 'file' });
  }
  t.equal((await d.request('POST', '/identity/create', { passphrase: 'templates test' })).status, 201);
  await d.request('POST', '/identity/lock');
  const locked = await d.request('GET', '/templates');
  t.equal(locked.body.code, 'identity_not_ready');
  t.equal(locked.body.identity.status, 'locked');
  t.equal((await d.request('POST', '/identity/unlock', { passphrase: 'templates test' })).status, 200);
  t.equal((await d.request('GET', '/templates')).status, 200, 'ready again once unlocked');
});

t.test('standard is built in, reviewed and a valid agent config with the built-in tools', async (t) => {
  const list = await d.request('GET', '/templates');
  t.equal(list.status, 200);
  t.same(list.body.templates, [
    {
      id: 'standard',
      name: 'Standard',
      description: list.body.templates[0].description,
      builtin: true,
      reviewed: true,
      valid: true,
    },
  ]);
  const one = await d.request('GET', '/templates/standard');
  t.equal(one.status, 200);
  const config = one.body.config;
  t.notOk('id' in config || 'name' in config, 'no id or name in a template');
  t.equal(
    firstSchemaError(AgentConfigSchema, { ...config, id: 'a1', name: 'Agent' }),
    null,
    'valid AgentConfig once named',
  );
  t.same(config.model, { provider: 'local', model_id: 'llama3.2', temperature: null, max_tokens: null });
  t.same(
    config.tools.map((tool: { name: string }) => tool.name),
    D7_TOOLS,
  );
  t.match(config.triggers.on_chat, { enabled: true, targets: [{ scope: 'agent' }] });
  t.equal((await d.request('GET', '/templates/nope')).status, 404);
  t.equal((await d.request('GET', '/templates/nope')).body.code, 'not_found');
});

t.test("standard's model follows the settings' first provider", async (t) => {
  const providers = [
    {
      id: 'acme',
      type: 'openai-compatible',
      name: 'Acme',
      baseUrl: 'http://127.0.0.1:9/v1',
      defaultModel: 'acme-large',
    },
    { id: 'other', type: 'anthropic', name: 'Other', baseUrl: 'http://127.0.0.1:9' },
  ];
  t.equal((await d.request('PATCH', '/settings', { providers })).status, 200);
  t.teardown(() => d.request('PATCH', '/settings', { providers: [] }));
  const config = (await d.request('GET', '/templates/standard')).body.config;
  t.match(config.model, { provider: 'acme', model_id: 'acme-large' });
  const created = await createFrom('standard');
  t.equal(created.status, 201);
  t.match(created.config.model, { provider: 'acme', model_id: 'acme-large' }, 'an agent created from it too');
});

t.test('user templates: shapes, invalid files, review marks bound to the content', async (t) => {
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
  t.same(
    list.map((x: { id: string }) => x.id),
    ['standard', 'bare', 'broken', 'nomodel', 'researcher'],
    'builtin first, then by id; reserved and odd names skipped',
  );
  const byId = Object.fromEntries(list.map((x: { id: string }) => [x.id, x]));
  t.match(byId.researcher, {
    name: 'Researcher',
    description: 'Digs through sources',
    builtin: false,
    reviewed: false,
    valid: true,
  });
  t.match(byId.bare, { name: 'Copied agent', valid: true });
  t.match(byId.broken, { valid: false, error: /not valid JSON/ });
  t.match(byId.nomodel, { valid: false, error: /model_id/ });
  t.equal(byId.standard.builtin, true);

  const bare = (await d.request('GET', '/templates/bare')).body;
  t.notOk('id' in bare.config || 'name' in bare.config, "a bare config's id and name are dropped");

  for (const [id, code] of [
    ['missing', 'template_missing'],
    ['broken', 'template_invalid'],
    ['nomodel', 'template_invalid'],
    ['researcher', 'template_unreviewed'],
  ]) {
    t.match(await createFrom(id!), { status: 422, body: { code } }, `create from ${id}: ${code}`);
  }

  const reviewed = await d.request('POST', '/templates/researcher/review');
  t.equal(reviewed.status, 200);
  t.match(reviewed.body, { id: 'researcher', reviewed: true });
  t.equal(statSync(join(d.dataDir, 'template-reviews.json')).mode & 0o777, 0o600);
  t.equal((await d.request('GET', '/templates/researcher')).body.reviewed, true);

  const resolved = await createFrom('researcher');
  t.equal(resolved.status, 201);
  t.equal(resolved.config.instructions, 'Research carefully.');
  t.equal(
    (await d.request('PATCH', `/agents/${resolved.body.agentId}/config`, { instructions: 'mutated' })).status,
    200,
  );
  t.equal((await createFrom('researcher')).config.instructions, 'Research carefully.', 'each agent gets a fresh copy');

  // Editing the file voids the mark.
  const edited = JSON.parse(readFileSync(researcherPath, 'utf8'));
  edited.config.instructions = 'Research carelessly.';
  writeFileSync(researcherPath, JSON.stringify(edited));
  t.equal((await d.request('GET', '/templates/researcher')).body.reviewed, false);
  t.match(await createFrom('researcher'), { status: 422, body: { code: 'template_unreviewed' } });
  t.equal((await d.request('POST', '/templates/researcher/review')).body.reviewed, true);
  t.equal((await createFrom('researcher')).config.instructions, 'Research carelessly.');

  const withdrawn = await d.request('DELETE', '/templates/researcher/review');
  t.equal(withdrawn.status, 200);
  t.equal(withdrawn.body.reviewed, false);

  const invalid = await d.request('POST', '/templates/broken/review');
  t.equal(invalid.status, 422);
  t.equal(invalid.body.code, 'template_invalid');
  t.equal((await d.request('POST', '/templates/standard/review')).body.reviewed, true, 'built-ins are reviewed');
  t.equal((await d.request('DELETE', '/templates/standard/review')).status, 409);
  t.equal((await d.request('POST', '/templates/missing/review')).status, 404);
  t.equal((await createFrom('standard')).status, 201, 'an agent from a built-in needs no mark of its own');
});
