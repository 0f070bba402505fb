/**
 * The 2026-07-28 MCP revision, negotiated by version (docs/mcp.md "Protocol revisions"), black box: the
 * built daemon runs a server on the v2 server SDK (test/fixtures/mcp/modern-server.mjs) over stdio and
 * over Streamable HTTP, and an older one on the v1 SDK (test/fixtures/mcp/sdk-server.mjs). The new server
 * is asked `server/discover` and never `initialize`; its tool's input-required result becomes an ask of the
 * turn that the owner answers, and the call is repeated with the answer. The older server gets the 2025
 * handshake after the same question. The declaration's subscription is made on `subscriptions/listen`.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { startToolDriver } from './helpers/tool-driver.js';

const FIXTURE = join(ROOT, 'test/fixtures/mcp/modern-server.mjs');

/** The fixture over HTTP, started here; its URL once it listens. */
async function httpFixture(): Promise<string> {
  const child = spawn(process.execPath, [FIXTURE, '--http'], { stdio: ['ignore', 'pipe', 'ignore'] });
  t.teardown(() => void child.kill());
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) {
    const url = /^listening (\S+)/.exec(line)?.[1];
    if (url) return url;
  }
  throw new Error('the HTTP fixture ended before it listened');
}

const httpUrl = await httpFixture();
const driver = await startToolDriver(t);
const d = await runDaemon(t, {
  settings: {
    providers: [driver.provider],
    mcpServers: [
      { name: 'modern', type: 'command', command: process.execPath, args: [FIXTURE] },
      { name: 'modernweb', type: 'http', url: httpUrl },
      {
        name: 'older',
        type: 'command',
        command: process.execPath,
        args: [join(ROOT, 'test/fixtures/mcp/sdk-server.mjs')],
      },
    ],
  },
});
const log = await eventLog(t, d);
const filePath = await createAgentFile(tempDir(t, 'agt-mcp-modern-'), {
  model: driver.model,
  mcp: {
    servers: [
      { name: 'modern', transport: 'stdio', subscribe: ['fixture://modern/watched'] },
      { name: 'modernweb', transport: 'http' },
      { name: 'older', transport: 'stdio' },
    ],
  },
});
const loaded = await d.request('POST', '/agents/load', { filePath });
if (loaded.status !== 200) throw new Error(`the agent did not load: ${JSON.stringify(loaded.body)}`);
const agentId: string = loaded.body.id;

interface View {
  name: string;
  status: string;
  protocolVersion?: string;
  logs: string[];
}
const servers = async () => (await d.request('GET', `/agents/${agentId}/mcp`)).body.servers as View[];
const end = Date.now() + 20_000;
while ((await servers()).some((server) => server.status !== 'connected')) {
  if (Date.now() > end) throw new Error(`failsafe: the servers did not connect: ${JSON.stringify(await servers())}`);
  await new Promise((r) => setTimeout(r, 25));
}
const byName = async (name: string) => (await servers()).find((server) => server.name === name)!;

t.test('a 2026-07-28 server is asked server/discover, never initialize', async (t) => {
  const modern = await byName('modern');
  t.equal(modern.protocolVersion, '2026-07-28');
  t.ok(
    modern.logs.some((line) => line.includes('got server/discover')),
    'server/discover',
  );
  t.notOk(
    modern.logs.some((line) => line.includes('got initialize')),
    'no initialize',
  );
  t.equal((await byName('modernweb')).protocolVersion, '2026-07-28', 'over Streamable HTTP too');
});

t.test('an older server gets the 2025 handshake', async (t) => {
  t.equal((await byName('older')).protocolVersion, '2025-11-25');
  t.equal(await driver.run(d, agentId, 'mcp_older_add_note', { name: 'n1' }), 'added');
});

t.test('the agent calls a 2026-07-28 tool; the log the server writes in its answer reaches the agent’s', async (t) => {
  t.equal(await driver.run(d, agentId, 'mcp_modern_greet', { name: 'Ada' }), 'hello Ada');
  t.equal(await driver.run(d, agentId, 'mcp_modernweb_greet', { name: 'Bo' }), 'hello Bo');
  const logs = (await d.request('GET', `/agents/${agentId}/logs?limit=200`)).body.logs as Array<{ message: string }>;
  const messages = logs.map((row) => row.message);
  t.ok(messages.includes('MCP server modern [warning] greeter: greeting Ada'), 'over stdio');
  t.ok(messages.includes('MCP server modernweb [warning] greeter: greeting Bo'), 'over HTTP');
});

for (const server of ['modern', 'modernweb'])
  t.test(`${server}: an input-required result is an ask of the turn; the answer goes back`, async (t) => {
    const from = log.events.length;
    const result = driver.run(d, agentId, `mcp_${server}_book`, { room: 'blue' });
    const event = await log.waitFor(
      (e) => e.event_type === 'hil.requested' && (e.payload as { kind: string }).kind === 'ask',
      'an ask',
      { from },
    );
    const ask = event.payload as { requestId: string; question: string };
    t.match(ask.question, new RegExp(`MCP server ${server} \\(during tool book\\) asks: Who is room blue for\\?`));
    const answered = await d.request('POST', `/agents/${agentId}/asks/${ask.requestId}/respond`, {
      answer: '{"name": "Ada"}',
    });
    t.equal(answered.status, 200);
    t.same(JSON.parse(await result), { room: 'blue', name: 'Ada' }, 'the request state and the answer came back');
  });

for (const server of ['modern', 'modernweb'])
  t.test(`${server}: a link to open is an ask of the turn; accepted, the call is made again at once`, async (t) => {
    const from = log.events.length;
    const result = driver.run(d, agentId, `mcp_${server}_unlock`, {});
    const event = await log.waitFor(
      (e) => e.event_type === 'hil.requested' && (e.payload as { kind: string }).kind === 'ask',
      'an ask',
      { from },
    );
    const ask = event.payload as { requestId: string; question: string };
    t.match(ask.question, /Sign in to the fixture/);
    t.match(ask.question, /https:\/\/fixture\.example\/signin/, 'with its link');
    t.equal(
      (await d.request('POST', `/agents/${agentId}/asks/${ask.requestId}/respond`, { answer: 'done' })).status,
      200,
    );
    // The revision has no completion notification: nothing is waited for after the owner's answer.
    t.equal(await result, 'unlocked (elicit accept)');
  });

t.test('a subscription is made on subscriptions/listen, and its update comes on it', async (t) => {
  const until = async (what: string, test: (logs: string[]) => boolean) => {
    const end = Date.now() + 10_000;
    while (!test((await byName('modern')).logs)) {
      if (Date.now() > end) throw new Error(`failsafe: ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  await until('subscribed', (logs) => logs.some((line) => line.includes('subscribed to fixture://modern/watched')));
  t.ok(
    (await byName('modern')).logs.some((line) => line.includes('got subscriptions/listen')),
    'on subscriptions/listen',
  );
  t.equal(await driver.run(d, agentId, 'mcp_modern_touch', {}), 'touched');
  await until('the update', (logs) => logs.some((line) => line.includes('resource updated: fixture://modern/watched')));
  t.notOk(
    (await byName('modern')).logs.some((line) => line.includes('got resources/subscribe')),
    'no resources/subscribe',
  );
});
