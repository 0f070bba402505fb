/**
 * A server's resources and prompts as the agent's tools (docs/mcp.md "Resources and prompts"), black box:
 * the built daemon runs a real stdio MCP server on the SDK (test/fixtures/mcp/sdk-server.mjs) and an
 * agent calls `mcp_<server>_resources_list`, `_resources_read`, `_prompts_list` and `_prompts_get`
 * through the tool-driving model. A resource the server adds later is in the next listing; a server
 * without resources or prompts gets no such tools.
 */
import { join } from 'node:path';
import t from 'tap';
import { FIXTURE_DIR, loadWithServers } from './helpers/mcp.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { startToolDriver } from './helpers/tool-driver.js';

const driver = await startToolDriver(t);
const d = await runDaemon(t, {
  settings: {
    providers: [driver.provider],
    mcpServers: [
      {
        name: 'docs',
        type: 'command',
        command: process.execPath,
        args: [join(ROOT, 'test/fixtures/mcp/sdk-server.mjs')],
      },
      { name: 'plain', type: 'command', command: process.execPath, args: [join(FIXTURE_DIR, 'server.mjs')] },
    ],
  },
});
const agentId = await loadWithServers(d, tempDir(t, 'agt-mcp-resources-'), driver.model, ['docs', 'plain']);

t.test('the tools are offered where the server has resources and prompts', async (t) => {
  const tools = (
    (await d.request('GET', `/agents/${agentId}/tools`)).body.tools as Array<{ name: string; source: string }>
  )
    .filter((tool) => tool.source.startsWith('mcp:'))
    .map((tool) => tool.name);
  for (const name of ['resources_list', 'resources_read', 'prompts_list', 'prompts_get'])
    t.ok(tools.includes(`mcp_docs_${name}`), `mcp_docs_${name}`);
  t.notOk(
    tools.some((name) => /^mcp_plain_(resources|prompts)_/.test(name)),
    'none for a server that has neither',
  );
});

t.test('list and read resources; a later one is in the next listing', async (t) => {
  const listed = JSON.parse(await driver.run(d, agentId, 'mcp_docs_resources_list', {}));
  t.same(listed.resources.map((r: { uri: string }) => r.uri).sort(), ['fixture://notes/readme', 'fixture://pixel.png']);
  t.same(listed.templates, [{ uriTemplate: 'fixture://notes/{name}', name: 'note', description: 'A note by name' }]);
  t.match(
    await driver.run(d, agentId, 'mcp_docs_resources_read', { uri: 'fixture://notes/readme' }),
    /hello from the fixture/,
  );
  t.match(
    await driver.run(d, agentId, 'mcp_docs_resources_read', { uri: 'fixture://notes/todo' }),
    /note todo/,
    'through the template',
  );
  t.match(
    await driver.run(d, agentId, 'mcp_docs_resources_read', { uri: 'fixture://pixel.png' }),
    /\[resource fixture:\/\/pixel\.png \(image\/png\)\]/,
  );
  const seen = JSON.stringify(driver.fake.chatRequests().at(-1)?.body.messages);
  t.match(seen, /data:image\/png;base64,iVBOR/, 'an image resource reaches the model as an image');
  t.match(
    await driver.run(d, agentId, 'mcp_docs_resources_read', { uri: 'fixture://nothing' }),
    /could not run resources\/read/,
  );
  t.equal(await driver.run(d, agentId, 'mcp_docs_add_note', { name: 'later' }), 'added');
  const again = JSON.parse(await driver.run(d, agentId, 'mcp_docs_resources_list', {}));
  t.ok(
    again.resources.some((r: { uri: string }) => r.uri === 'fixture://added/later'),
    'the new resource',
  );
});

t.test('list and get prompts', async (t) => {
  const listed = JSON.parse(await driver.run(d, agentId, 'mcp_docs_prompts_list', {}));
  t.same(listed.prompts, [
    {
      name: 'review',
      description: 'Asks for a review',
      arguments: [{ name: 'topic', description: 'what to review', required: true }],
    },
  ]);
  const got = await driver.run(d, agentId, 'mcp_docs_prompts_get', {
    name: 'review',
    arguments: { topic: 'the plan' },
  });
  t.equal(got, '[user]\nPlease review the plan.');
});
