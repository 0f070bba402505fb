/**
 * Letta Agent Files (docs/backups.md), against one built daemon (the shipped extensions): a hand-made `.af`
 * imports as an agent, and the agent exports back to one.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { agtInProcess } from './helpers/cli-in-process.js';
import { wireDaemon, type WireDaemon } from './helpers/wire-daemon.js';

/** Runs `agt` against the test daemon in this process (helpers/cli-in-process.ts). */
function agt(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return agtInProcess(args, { NO_COLOR: '1', AGT_DAEMON_URL: h.d.url, AGT_DAEMON_TOKEN: h.d.token });
}

let h: WireDaemon;
let dir: string;
/** Main's loop rows of a loaded agent (oldest first). */
const loop = async (id: string) =>
  (await h.d.request('GET', `/agents/${id}/loop?limit=500`)).body.rows as Array<{
    role: string;
    content: any;
    created_at: number;
  }>;

t.before(async () => {
  h = await wireDaemon(t);
  dir = h.dir;
  mkdirSync(join(dir, 'agents'));
  await h.d.request('PATCH', '/settings', { agentsFolder: join(dir, 'agents') });
  t.equal((await h.d.request('POST', '/identity/create', { passphrase: 'owner passphrase' })).status, 201);
});

t.test('a Letta Agent File (.af) made by hand imports, and the agent exports back to one', async (t) => {
  const af = {
    agents: [
      {
        id: 'agent-0',
        name: 'Letta Guest',
        description: 'came from Letta',
        system: 'You are a careful research assistant.',
        agent_type: 'letta_v1_agent',
        llm_config: { model: 'gpt-4o-mini', model_endpoint_type: 'openai', context_window: 32000 },
        block_ids: ['block-0', 'block-1'],
        tool_ids: ['tool-0', 'tool-1'],
        tool_rules: [],
        messages: [
          {
            id: 'message-0',
            role: 'system',
            content: [{ type: 'text', text: 'compiled system prompt' }],
            created_at: '2025-11-21T03:05:34+00:00',
          },
          {
            id: 'message-1',
            role: 'user',
            content: [{ type: 'text', text: 'hello from Letta' }],
            created_at: '2025-11-21T03:06:00+00:00',
          },
          {
            id: 'message-2',
            role: 'assistant',
            content: [{ type: 'text', text: 'hi, I remember you' }],
            created_at: '2025-11-21T03:06:01+00:00',
          },
          {
            id: 'message-3',
            role: 'tool',
            content: [{ type: 'text', text: '{"status": "OK"}' }],
            tool_call_id: 'call-1',
          },
        ],
        in_context_message_ids: ['message-0', 'message-1', 'message-2'],
      },
    ],
    blocks: [
      {
        id: 'block-0',
        label: 'human',
        value: 'Name: Chad',
        limit: 5000,
        description: 'about the user',
        read_only: false,
      },
      { id: 'block-1', label: 'persona', value: 'I am Sam.', limit: 5000, description: 'who I am', read_only: true },
    ],
    tools: [
      {
        id: 'tool-0',
        name: 'conversation_search',
        tool_type: 'letta_core',
        source_code: null,
        json_schema: { name: 'conversation_search', parameters: { type: 'object', properties: {} } },
      },
      {
        id: 'tool-1',
        name: 'fs_read',
        tool_type: 'custom',
        source_code: 'def fs_read(): pass',
        json_schema: { name: 'fs_read', parameters: { type: 'object', properties: {} } },
      },
    ],
    groups: [],
    files: [],
    sources: [],
    mcp_servers: [],
  };
  const path = join(dir, 'guest.af');
  writeFileSync(path, JSON.stringify(af));
  const imported = await h.d.request('POST', '/agents/import', { from: path, directory: join(dir, 'agents') });
  t.equal(imported.status, 200, JSON.stringify(imported.body));
  t.equal(imported.body.name, 'Letta Guest');
  t.same(imported.body.imported, {
    blocks: 2,
    memories: 2,
    messages: 2,
    tools: ['fs_read'],
    toolsNotMapped: ['conversation_search'],
  });
  t.same(imported.body.skipped, { 'messages:system': 1, 'messages:tool': 1 });
  const agentId: string = imported.body.agentId;
  const config = (await h.d.request('GET', `/agents/${agentId}/config`)).body.config;
  t.equal(config.instructions, 'You are a careful research assistant.');
  t.equal(config.description, 'came from Letta');
  t.equal(config.model.model_id, 'gpt-4o-mini');
  t.ok(config.tools.some((tool: { name: string; enabled: boolean }) => tool.name === 'fs_read' && tool.enabled));
  t.equal(
    (await h.d.request('GET', `/agents/${agentId}/files/content?path=memory/human.md`)).body.content,
    'Name: Chad',
  );
  const files = (await h.d.request('GET', `/agents/${agentId}/files`)).body.files as Array<{
    path: string;
    protection: string;
  }>;
  t.equal(
    files.find((file) => file.path === 'memory/persona.md')?.protection,
    'readonly',
    'read_only blocks stay read-only',
  );
  const rows = await loop(agentId);
  t.same(
    rows.map((row) => [row.role, (row.content as { text: string }).text]),
    [
      ['user', 'hello from Letta'],
      ['assistant', 'hi, I remember you'],
    ],
  );
  t.equal(rows[0]!.created_at, Date.parse('2025-11-21T03:06:00+00:00'));

  const memories = (await h.d.request('GET', `/agents/${agentId}/memory`)).body.memories as Array<{
    id: number;
    text: string;
    kind: string;
    pinned: boolean;
  }>;
  t.same(
    memories.map((m) => [m.text, m.kind, m.pinned]),
    [
      ['I am Sam.', 'instruction', true],
      ['Name: Chad', 'fact', true],
    ],
    'each block is a pinned memory; persona an instruction',
  );

  const exported = await h.d.request('GET', `/agents/${imported.body.agentId}/export?format=af`);
  t.equal(exported.status, 200, JSON.stringify(exported.body));
  const doc = exported.body;
  t.equal(doc.agents[0].name, 'Letta Guest');
  t.equal(doc.agents[0].system, 'You are a careful research assistant.');
  t.same(
    doc.blocks.map((b: { label: string; value: string; limit: number; read_only: boolean }) => [
      b.label,
      b.value,
      b.limit,
      b.read_only,
    ]),
    [
      ['human', 'Name: Chad', 5000, false],
      ['persona', 'I am Sam.', 5000, true],
    ],
  );

  // Back to blocks: the memory a block became wins over the file, and other pinned memories are blocks of their own.
  const human = memories.find((m) => m.text === 'Name: Chad')!;
  t.equal(
    (await h.d.request('PATCH', `/agents/${agentId}/memory/${human.id}`, { text: 'Name: Chad; lives in Oslo' })).status,
    200,
  );
  const pinned = (
    await h.d.request('POST', `/agents/${agentId}/memory`, {
      text: 'Deploys happen on Tuesdays',
      kind: 'instruction',
      pinned: true,
    })
  ).body.memory.id;
  t.equal(
    (await h.d.request('POST', `/agents/${agentId}/memory`, { text: 'an unpinned fact stays out of the blocks' }))
      .status,
    201,
  );
  const again = (await h.d.request('GET', `/agents/${agentId}/export?format=af`)).body;
  t.same(
    again.blocks.map((b: { label: string; value: string; metadata: { agt?: { kind: string } } }) => [
      b.label,
      b.value,
      b.metadata.agt?.kind,
    ]),
    [
      ['human', 'Name: Chad; lives in Oslo', 'fact'],
      ['persona', 'I am Sam.', 'instruction'],
      [`memory_${pinned}`, 'Deploys happen on Tuesdays', 'instruction'],
    ],
  );
  t.same(
    again.agents[0].block_ids,
    again.blocks.map((b: { id: string }) => b.id),
  );
  const roundTrip = join(dir, 'round-trip.af');
  writeFileSync(
    roundTrip,
    JSON.stringify({
      ...again,
      blocks: [...again.blocks, { id: 'block-9', label: 'keys', value: 'sk-proj-abcdefghijklmnopqrstuvwxyz012345' }],
      agents: [{ ...again.agents[0], block_ids: [...again.agents[0].block_ids, 'block-9'] }],
    }),
  );
  const second = await h.d.request('POST', '/agents/import', {
    from: roundTrip,
    directory: join(dir, 'agents'),
    name: 'Round Trip',
  });
  t.equal(second.status, 200, JSON.stringify(second.body));
  t.match(
    second.body,
    { imported: { blocks: 4, memories: 3 }, skipped: { 'memories:credential': 1 } },
    'a block holding a key shape stays a file, never a memory',
  );
  const back = (await h.d.request('GET', `/agents/${second.body.agentId}/memory`)).body.memories as Array<{
    text: string;
    kind: string;
    pinned: boolean;
  }>;
  t.same(back.map((m) => [m.text, m.kind, m.pinned]).reverse(), [
    ['Name: Chad; lives in Oslo', 'fact', true],
    ['I am Sam.', 'instruction', true],
    ['Deploys happen on Tuesdays', 'instruction', true],
  ]);
  t.same(
    doc.agents[0].messages.map((m: { role: string; content: Array<{ text: string }> }) => [m.role, m.content[0]!.text]),
    [
      ['user', 'hello from Letta'],
      ['assistant', 'hi, I remember you'],
    ],
  );
  t.ok(doc.tools.some((tool: { name: string }) => tool.name === 'fs_read'));
  const bad = join(dir, 'bad.af');
  writeFileSync(bad, JSON.stringify({ agents: [{ description: 'no name' }] }));
  t.equal((await h.d.request('POST', '/agents/import', { from: bad })).status, 400);
  const renamed = await agt('--json', 'import', path, '--dir', join(dir, 'agents'), '--name', 'Guest Two');
  t.equal(renamed.code, 0, renamed.stderr);
  t.match(
    JSON.parse(renamed.stdout),
    { name: 'Guest Two', filePath: /guest-two\.agt$/ },
    'import --name names the new agent (and its file)',
  );
});
