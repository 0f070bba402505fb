/**
 * agt as an MCP server: the MCP SDK's own Client against `/mcp/server` over Streamable HTTP
 * and over `agt mcp serve` (StdioClientTransport spawning bin/agt.mjs): tools, a chat with a model (the
 * fake OpenAI-style server) with its steps as progress and as log messages (`logging/setLevel`), an approval
 * answered by elicitation and through answer_task, resources
 * (card, conversation, files), an agent the settings do not expose refused everywhere, the bearer token and the Origin
 * guard; a chat's stream dropped after its priming event resumes with `Last-Event-ID` (raw, and the SDK client doing
 * it by itself, its progress and result replayed). One built daemon for the whole file.
 */
import { join } from 'node:path';
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { reply, startFakeOpenAI } from './fakes/openai.js';
import { rawRequest } from './helpers/raw-http.js';

/** Replies by the message: `please write` calls fs_write (restricted: an approval), else echoes. */
const model = await startFakeOpenAI(t, (request) => {
  const last = (request.body.messages as Array<{ role: string; content: unknown }>).at(-1)!;
  if (last.role === 'tool') return reply.text(`tool said: ${String(last.content).slice(0, 80)}`);
  const content = String(last.content);
  const file = /please write (\S+)/.exec(content)?.[1];
  if (file) return reply.toolCalls([{ name: 'fs_write', args: { path: file, content: `written ${file}` } }]);
  return reply.text(`echo: ${content}`);
});

const d = await runDaemon(t, {
  extensions: {
    extensions: [
      {
        name: 'providers',
        module: join(ROOT, 'extensions/providers/index.ts'),
        enabled: true,
        config: { maxRetries: 0 },
      },
      { name: 'mcp', module: join(ROOT, 'extensions/mcp/index.ts'), enabled: true, config: {} },
    ],
  },
  settings: {
    mcpServer: { agents: ['echo', 'careful'] },
    providers: [
      { id: 'mcp-test', type: 'openai-compatible', name: 'MCP test model', baseUrl: model.baseUrl, defaultModel: 'm' },
    ],
  },
  env: { AGT_OWNER_PASSPHRASE: 'mcp server test' },
});
const log = await eventLog(t, d);
const agentsDir = tempDir(t, 'agt-mcp-agents-');
async function createAgent(name: string, patch: Record<string, unknown>): Promise<string> {
  const created = await d.request('POST', '/agents/create', { name, directory: agentsDir });
  if (created.status !== 201) throw new Error(`create ${name}: ${created.status} ${JSON.stringify(created.body)}`);
  const patched = await d.request('PATCH', `/agents/${created.body.agentId}/config`, {
    model: { provider: 'mcp-test', model_id: 'm' },
    ...patch,
  });
  if (patched.status !== 200) throw new Error(`patch ${name}: ${patched.status} ${JSON.stringify(patched.body)}`);
  return created.body.agentId as string;
}
const identity = await d.request('POST', '/identity/create', { passphrase: 'mcp server test' });
if (identity.status !== 201) throw new Error(`identity: ${identity.status}`);
const echo = await createAgent('Echo', { handle: 'echo', description: 'Says back what it hears' });
const careful = await createAgent('Careful', {
  handle: 'careful',
  tools: [{ name: 'fs_write', enabled: true, restricted: true }],
});
const hidden = await createAgent('Hidden', { handle: 'hidden' });
const endpoint = `${d.url}/mcp/server`;

/**
 * Resolves with the turn.completed that `match` accepts, among the events from the moment of the call (made before the
 * call that starts or unblocks the turn).
 */
function turnEnd(match: (event: any) => boolean): Promise<any> {
  return log.waitFor((event) => event.event_type === 'turn.completed' && match(event), 'the end of the turn', {
    from: log.events.length,
  });
}

async function httpClient(t: any, elicit?: (request: any) => any): Promise<Client> {
  const client = new Client(
    { name: 'test', version: '1.0.0' },
    { capabilities: elicit ? { elicitation: { form: {} } } : {} },
  );
  if (elicit) client.setRequestHandler(ElicitRequestSchema, elicit);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(endpoint), {
      requestInit: { headers: { authorization: `Bearer ${d.token}` } },
    }),
  );
  t.teardown(() => client.close());
  return client;
}
const textOf = (result: any) => result.content.map((part: any) => part.text).join('');
/** The text of a resource read (a blob has none). */
const resourceText = (read: { contents: Array<{ text?: string } | { blob: string }> }) =>
  (read.contents[0] as { text?: string }).text;

t.test('over Streamable HTTP: tools, a chat with progress, resources', async (t) => {
  const client = await httpClient(t);
  t.same((await client.listTools()).tools.map((tool) => tool.name).sort(), [
    'answer_task',
    'chat',
    'get_tasks',
    'list_agents',
  ]);
  const listed = (await client.callTool({ name: 'list_agents', arguments: {} })) as any;
  t.same(
    listed.structuredContent.agents.map((agent: any) => agent.handle).sort(),
    ['careful', 'echo'],
    'only the agents settings expose',
  );

  const progress: string[] = [];
  const reply = (await client.callTool({ name: 'chat', arguments: { agent: 'echo', text: 'hello there' } }, undefined, {
    onprogress: (p) => void progress.push(String(p.message)),
  })) as any;
  t.equal(textOf(reply), 'echo: hello there');
  t.equal(reply.structuredContent.status, 'completed');
  t.match(reply.structuredContent.turnId, /\S/);
  t.ok(progress.includes('the turn started'), 'progress notifications while the turn ran');

  const resources = (await client.listResources()).resources.map((resource) => resource.uri);
  t.ok(resources.includes(`agt://agents/${echo}/card`) && resources.includes(`agt://agents/${careful}/conversation`));
  t.notOk(
    resources.some((uri) => uri.includes(hidden)),
    'no resource of an agent not exposed',
  );
  const card = JSON.parse(resourceText(await client.readResource({ uri: `agt://agents/${echo}/card` })) ?? '');
  t.match(card, {
    id: echo,
    name: 'Echo',
    handle: 'echo',
    description: 'Says back what it hears',
    did: /^did:key:z6Mk/,
  });
  const conversation = JSON.parse(
    resourceText(await client.readResource({ uri: `agt://agents/${echo}/conversation` })) ?? '',
  );
  t.same(
    conversation.slice(-2).map((row: any) => [row.role, row.content, row.turnId]),
    [
      ['user', 'hello there', reply.structuredContent.turnId],
      ['assistant', 'echo: hello there', reply.structuredContent.turnId],
    ],
  );
  // The same steps as log messages, filtered by logging/setLevel.
  const logged: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logged.push(String(n.params.data)));
  await client.setLoggingLevel('info');
  await client.callTool({ name: 'chat', arguments: { agent: 'echo', text: 'logged' } });
  t.ok(logged.includes('the turn started'), 'log messages at info');
  await client.setLoggingLevel('warning');
  const before = logged.length;
  await client.callTool({ name: 'chat', arguments: { agent: 'echo', text: 'quiet' } });
  t.equal(logged.length, before, 'none above the level set');
});

t.test('an approval: by elicitation, else through get_tasks and answer_task; files read-only', async (t) => {
  const asked: any[] = [];
  const eliciting = await httpClient(t, async (request) => {
    asked.push(request.params);
    return { action: 'accept', content: { decision: 'approve' } };
  });
  const approved = (await eliciting.callTool({
    name: 'chat',
    arguments: { agent: 'careful', text: 'please write notes/a.txt' },
  })) as any;
  t.match(asked[0].message, /fs_write/, 'the approval came as an elicitation');
  t.equal(approved.structuredContent.status, 'completed');
  t.match(textOf(approved), /^tool said:/);
  const file = await eliciting.readResource({ uri: `agt://agents/${careful}/files/notes/a.txt` });
  t.equal(resourceText(file), 'written notes/a.txt');

  const plain = await httpClient(t);
  const waiting = (await plain.callTool({
    name: 'chat',
    arguments: { agent: 'careful', text: 'please write notes/b.txt' },
  })) as any;
  t.equal(waiting.structuredContent.status, 'waiting');
  t.match(waiting.structuredContent.waiting, { kind: 'approval', tool: 'fs_write' });
  t.match(textOf(waiting), /answer_task/, 'the result says how to answer');
  const tasks = (await plain.callTool({ name: 'get_tasks', arguments: {} })) as any;
  t.same(
    tasks.structuredContent.tasks.map((task: any) => [task.agent, task.kind, task.id]),
    [[careful, 'approval', waiting.structuredContent.waiting.id]],
  );
  const ended = turnEnd((event) => event.payload.turn_id === waiting.structuredContent.turnId);
  const answered = (await plain.callTool({
    name: 'answer_task',
    arguments: { agent: 'careful', id: waiting.structuredContent.waiting.id, decision: 'approve' },
  })) as any;
  t.notOk(answered.isError);
  t.match((await ended).payload.text, /^tool said:/);
  t.equal(
    resourceText(await plain.readResource({ uri: `agt://agents/${careful}/files/notes/b.txt` })),
    'written notes/b.txt',
  );
  await t.rejects(
    plain.readResource({ uri: `agt://agents/${careful}/files/..%2F..%2Fetc%2Fpasswd` }),
    "a path out of the agent's files names nothing",
  );
  t.same(
    (await plain.listTools()).tools.filter((tool) => /write|delete/.test(tool.name)),
    [],
    'no tool writes files',
  );
});

t.test(
  'stored files are read with a passive type: plain text for text, never an active type the agent stored',
  async (t) => {
    const put = async (path: string, body: Record<string, unknown>) => {
      const answer = await d.request('PUT', `/agents/${echo}/files/content?path=${encodeURIComponent(path)}`, body);
      if (answer.status !== 200) throw new Error(`put ${path}: ${answer.status}`);
    };
    await put('notes/todo.txt', { content: 'buy milk\n' });
    await put('notes/page', { content: '<script>alert(1)</script>', mime_type: 'text/html;profile=mcp-app' });
    await put('notes/data.json', { content: '{"a":1}', mime_type: 'application/json' });
    await put('notes/blob', { content: Buffer.from([1, 0, 2]).toString('base64'), encoding: 'base64' });
    await put('notes/pic.png', {
      content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1]).toString('base64'),
      encoding: 'base64',
      mime_type: 'image/png',
    });
    const client = await httpClient(t);
    const read = async (path: string) =>
      (await client.readResource({ uri: `agt://agents/${echo}/files/${path}` })).contents[0] as {
        mimeType?: string;
        text?: string;
        blob?: string;
      };
    t.match(await read('notes/todo.txt'), { mimeType: 'text/plain; charset=utf-8', text: 'buy milk\n' });
    t.match(
      await read('notes/page'),
      { mimeType: 'text/plain; charset=utf-8', text: '<script>alert(1)</script>' },
      'an active type the agent stored is not handed on',
    );
    t.match(await read('notes/data.json'), { mimeType: 'application/json; charset=utf-8', text: '{"a":1}' });
    t.match(await read('notes/blob'), {
      mimeType: 'application/octet-stream',
      blob: Buffer.from([1, 0, 2]).toString('base64'),
    });
    t.match(await read('notes/pic.png'), { mimeType: 'image/png' });
    const listed = new Map(
      (await client.listResources()).resources.map((resource) => [resource.uri, resource.mimeType]),
    );
    t.equal(
      listed.get(`agt://agents/${echo}/files/notes/todo.txt`),
      undefined,
      'listed without a type when none is known (the bytes decide at read)',
    );
    t.equal(listed.get(`agt://agents/${echo}/files/notes/page`), undefined, 'nor an active one');
    t.equal(listed.get(`agt://agents/${echo}/files/notes/pic.png`), 'image/png');
    for (const path of ['notes/todo.txt', 'notes/page', 'notes/data.json', 'notes/blob', 'notes/pic.png']) {
      await d.request('DELETE', `/agents/${echo}/files/content?path=${encodeURIComponent(path)}`);
    }
  },
);

t.test('an agent the settings do not expose is refused by every tool and resource', async (t) => {
  const client = await httpClient(t);
  for (const [name, args] of [
    ['chat', { agent: 'hidden', text: 'hi' }],
    ['chat', { agent: hidden, text: 'hi' }],
    ['get_tasks', { agent: 'hidden' }],
    ['answer_task', { agent: 'hidden', id: 'x', decision: 'approve' }],
  ] as const) {
    const result = (await client.callTool({ name, arguments: args })) as any;
    t.equal(result.isError, true, `${name} ${JSON.stringify(args)}`);
    t.match(textOf(result), /No agent .* is exposed/);
  }
  for (const what of ['card', 'conversation', 'files/notes/a.txt'])
    await t.rejects(client.readResource({ uri: `agt://agents/${hidden}/${what}` }), what);
  const history = await d.request('GET', `/agents/${hidden}/chat`);
  t.equal(history.body, null, 'no chat reached it');

  // The list is read at every call: exposing it (and then every agent with "*") applies at once.
  const listed = async () =>
    ((await client.callTool({ name: 'list_agents', arguments: {} })) as any).structuredContent.agents
      .map((agent: any) => agent.handle)
      .sort();
  t.equal((await d.request('PUT', '/settings/mcpServer', { value: { agents: ['*'] } })).status, 200);
  t.same(await listed(), ['careful', 'echo', 'hidden'], '"*" exposes every loaded agent');
  t.equal((await d.request('PUT', '/settings/mcpServer', { value: { agents: [] } })).status, 200);
  t.same(await listed(), [], 'an empty list exposes none');
  t.equal((await d.request('PUT', '/settings/mcpServer', { value: { agents: ['echo', 'careful'] } })).status, 200);
});

t.test('the main API guards: no token is 401, a foreign Origin 403', async (t) => {
  const init = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
  });
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const port = new URL(d.url).port;
  const anonymous = await rawRequest(d.url, {
    method: 'POST',
    path: '/mcp/server',
    headers: { ...headers, host: `127.0.0.1:${port}` },
    body: init,
  });
  t.equal(anonymous.status, 401);
  const foreign = await rawRequest(d.url, {
    method: 'POST',
    path: '/mcp/server',
    headers: {
      ...headers,
      host: `127.0.0.1:${port}`,
      origin: 'http://evil.example',
      authorization: `Bearer ${d.token}`,
    },
    body: init,
  });
  t.equal(foreign.status, 403);
  t.equal(foreign.body.code, 'cross_origin');
  const client = new Client({ name: 'test', version: '1.0.0' });
  await t.rejects(
    client.connect(new StreamableHTTPClientTransport(new URL(endpoint))),
    'the SDK client without the token fails to connect',
  );
});

t.test('over agt mcp serve (stdio bridge): tools, a chat, an approval by elicitation', async (t) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(ROOT, 'bin/agt.mjs'), 'mcp', 'serve'],
    env: { PATH: process.env.PATH ?? '', HOME: d.dataDir, AGT_DAEMON_URL: d.url, AGT_DAEMON_TOKEN: d.token },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'stdio-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { decision: 'approve' } }));
  await client.connect(transport);
  t.teardown(() => client.close());
  t.same((await client.listTools()).tools.map((tool) => tool.name).sort(), [
    'answer_task',
    'chat',
    'get_tasks',
    'list_agents',
  ]);
  const reply = (await client.callTool({ name: 'chat', arguments: { agent: 'echo', text: 'through stdio' } })) as any;
  t.equal(textOf(reply), 'echo: through stdio');
  const approved = (await client.callTool({
    name: 'chat',
    arguments: { agent: 'careful', text: 'please write notes/c.txt' },
  })) as any;
  t.equal(approved.structuredContent.status, 'completed', 'the elicitation crossed the bridge both ways');
  t.equal(
    resourceText(await client.readResource({ uri: `agt://agents/${careful}/files/notes/c.txt` })),
    'written notes/c.txt',
  );
});

t.test('a dropped stream resumes with Last-Event-ID: the chat result is replayed', async (t) => {
  const url = `${d.url}/mcp/server`;
  const headers: Record<string, string> = {
    authorization: `Bearer ${d.token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
  };
  const post = (body: unknown, more: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(url, { method: 'POST', headers: { ...headers, ...more }, body: JSON.stringify(body), signal });
  const init = await post({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  const session = { 'mcp-session-id': init.headers.get('mcp-session-id') ?? '' };
  await init.text();
  await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).text();

  const dropped = new AbortController();
  const call = await post(
    {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'chat', arguments: { agent: 'echo', text: 'resumed' } },
    },
    session,
    dropped.signal,
  );
  const reader = call.body!.getReader();
  let first = '';
  while (!first.includes('\n\n')) first += new TextDecoder().decode((await reader.read()).value);
  const priming = /^id: (\S+)\nretry: (\d+)\ndata: \n\n/.exec(first);
  t.ok(priming, 'the stream starts with a priming event: an id and a retry field');
  t.equal(priming?.[2], '1000');
  dropped.abort();

  const resumed = await fetch(url, { headers: { ...headers, ...session, 'last-event-id': priming![1]! } });
  t.equal(resumed.status, 200);
  const events = resumed.body!.getReader();
  let text = '';
  let result: any;
  while (!result) {
    const chunk = await events.read();
    if (chunk.done) break;
    text += new TextDecoder().decode(chunk.value);
    for (const line of text.split('\n'))
      if (line.startsWith('data: {')) {
        const message = JSON.parse(line.slice(6));
        if (message.id === 2) result = message.result;
      }
  }
  await events.cancel();
  t.equal(textOf(result), 'echo: resumed', 'the result came on the resumed stream');
});

t.test(
  'the SDK client resumes a dropped chat stream: its GET with Last-Event-ID brings progress and result',
  async (t) => {
    const resumedFrom: string[] = [];
    let cut = false;
    // A proxy's idle timeout as the client sees it: the chat's POST stream ends cleanly right after its priming event.
    const cutting = async (url: string | URL, init?: RequestInit): Promise<Response> => {
      const lastEventId = new Headers(init?.headers).get('last-event-id');
      if (init?.method === 'GET' && lastEventId) resumedFrom.push(lastEventId);
      const answer = await fetch(url, init);
      if (cut || init?.method !== 'POST' || !String(init.body).includes('"name":"chat"')) return answer;
      cut = true;
      const reader = answer.body!.getReader();
      let head = '';
      while (!head.includes('\n\n')) {
        const chunk = await reader.read();
        if (chunk.done) break;
        head += new TextDecoder().decode(chunk.value);
      }
      await reader.cancel();
      return new Response(head.slice(0, head.indexOf('\n\n') + 2), { status: answer.status, headers: answer.headers });
    };
    const client = new Client({ name: 'resuming', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(endpoint), {
        requestInit: { headers: { authorization: `Bearer ${d.token}` } },
        fetch: cutting,
      }),
    );
    t.teardown(() => client.close());
    const progress: Array<{ progress: number; message?: string }> = [];
    const result = await client.callTool({ name: 'chat', arguments: { agent: 'echo', text: 'cut short' } }, undefined, {
      onprogress: (p) => void progress.push(p),
    });
    t.ok(cut, "the chat's POST stream was cut after its priming event");
    t.equal(textOf(result), 'echo: cut short', 'the result came on the resumed stream');
    t.equal(resumedFrom.length, 1, 'one GET with Last-Event-ID');
    t.match(resumedFrom[0], /:\d+$/, "naming the priming event's id");
    t.ok(
      progress.some((p) => p.message === 'the turn started'),
      'the progress sent while the stream was down came on the resumed stream',
    );
    t.same(
      progress.map((p) => p.progress),
      progress.map((_p, n) => n + 1),
      'progress values increase, none lost or repeated',
    );
  },
);
