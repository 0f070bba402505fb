/**
 * An MCP server's elicitation becomes an `ask` of the turn that called its tool (docs/mcp.md
 * "Elicitation"), black box: the built daemon runs a real stdio MCP server on the SDK
 * (test/fixtures/mcp/sdk-server.mjs) whose tools ask questions; the owner answers through the ask
 * routes and `agt approvals` / `agt answer`. Form mode: the question lists the fields, an answer that does not
 * fit is asked again, defaults are filled in, `decline` declines; URL mode shows the link (in `agt approvals` too) and ends its wait on the completion; an unanswered one
 * is cancelled after the owner's `elicitationTimeoutMs`; a pending one keeps its form across a restart.
 */
import { join } from 'node:path';
import t from 'tap';
import type { UmbilicalEvent } from '../contracts/events.js';
import { createAgentFile } from './helpers/agent-file.js';
import { agtInProcess } from './helpers/cli-in-process.js';
import { ROOT, runDaemon, shippedManifest, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { startToolDriver } from './helpers/tool-driver.js';

const driver = await startToolDriver(t);
let d = await runDaemon(t, {
  extensions: shippedManifest({ mcp: { elicitationTimeoutMs: 4000 } }),
  settings: {
    providers: [driver.provider],
    mcpServers: [
      {
        name: 'asker',
        type: 'command',
        command: process.execPath,
        args: [join(ROOT, 'test/fixtures/mcp/sdk-server.mjs')],
      },
    ],
  },
});
let log = await eventLog(t, d);
const filePath = await createAgentFile(tempDir(t, 'agt-mcp-elicit-'), {
  model: driver.model,
  mcp: { servers: [{ name: 'asker', transport: 'stdio' }] },
});
const loaded = await d.request('POST', '/agents/load', { filePath });
if (loaded.status !== 200) throw new Error(`the agent did not load: ${JSON.stringify(loaded.body)}`);
const agentId: string = loaded.body.id;

const end = Date.now() + 20_000;
while ((await d.request('GET', `/agents/${agentId}/mcp`)).body.servers[0]?.status !== 'connected') {
  if (Date.now() > end) throw new Error('failsafe: the server did not connect');
  await new Promise((r) => setTimeout(r, 25));
}

/** The next ask of the agent (from event index `from`). */
async function nextAsk(
  from: number,
): Promise<{ requestId: string; question: string; schema?: { properties?: object }; at: number }> {
  const event = (await log.waitFor(
    (e) => e.event_type === 'hil.requested' && (e.payload as { kind: string }).kind === 'ask',
    'an ask',
    { from },
  )) as UmbilicalEvent;
  const payload = event.payload as { requestId: string; question: string; schema?: { properties?: object } };
  return { ...payload, at: log.events.indexOf(event) + 1 };
}
const answer = (requestId: string, text: string) =>
  d.request('POST', `/agents/${agentId}/asks/${requestId}/respond`, { answer: text });

t.test('form mode: fields listed, a wrong answer asked again, defaults filled in', async (t) => {
  const from = log.events.length;
  const result = driver.run(d, agentId, 'mcp_asker_signup', {});
  const first = await nextAsk(from);
  t.match(first.question, /MCP server asker \(during tool signup\) asks: Which account should I create\?/);
  t.match(first.question, /- email "Email" \(string, email; required\): where the invoice goes/);
  t.match(first.question, /- plan \(one of: "free", "pro"; optional, default "free"\)/);
  t.match(first.question, /- seats \(integer; optional, default 1\)/);
  const listed = (await d.request('GET', `/agents/${agentId}/asks`)).body;
  t.ok(JSON.stringify(listed).includes(first.requestId), 'listed with the agent’s asks');
  t.same(Object.keys(first.schema?.properties ?? {}).sort(), ['email', 'newsletter', 'plan', 'seats'], 'the schema');
  const tasks = (await d.request('GET', '/tasks?kind=ask')).body.tasks as Array<{ id: string; schema?: unknown }>;
  t.same(tasks.find((task) => task.id === first.requestId)?.schema, first.schema, 'GET /tasks carries it too');
  t.equal((await answer(first.requestId, '{"plan": "gold"}')).status, 200);
  const second = await nextAsk(first.at);
  t.not(second.requestId, first.requestId);
  t.match(second.question, /The last answer was not used: plan: choose one of "free", "pro"/);
  t.equal((await answer(second.requestId, '{"email": "owner@example.com", "newsletter": "yes"}')).status, 200);
  const got = JSON.parse(await result);
  t.same(got, {
    action: 'accept',
    content: { email: 'owner@example.com', newsletter: true, plan: 'free', seats: 1 },
  });
});

t.test('decline and cancel', async (t) => {
  for (const [said, action] of [
    ['Decline', 'decline'],
    ['cancel', 'cancel'],
  ]) {
    const from = log.events.length;
    const result = driver.run(d, agentId, 'mcp_asker_signup', {});
    const ask = await nextAsk(from);
    await answer(ask.requestId, said!);
    t.same(JSON.parse(await result), { action }, `"${said}" is the server's ${action}`);
  }
});

t.test('URL mode shows the link; the completion is noted', async (t) => {
  const from = log.events.length;
  const result = driver.run(d, agentId, 'mcp_asker_open_link', {});
  const ask = await nextAsk(from);
  t.match(ask.question, /asks you to open a link: Connect your calendar/);
  t.match(ask.question, /Link: https:\/\/calendar\.example\/connect\?session=abc/);
  t.equal(ask.schema, undefined, 'a link asks for no form');
  const env = { AGT_DAEMON_URL: d.url, AGT_DAEMON_TOKEN: d.token, NO_COLOR: '1' };
  const listed = await agtInProcess(['approvals'], env);
  t.match(listed.stdout, 'Link: https://calendar.example/connect?session=abc', 'agt approvals shows the link');
  await answer(ask.requestId, 'done');
  t.same(JSON.parse(await result), { action: 'accept' });
  const logs = (await d.request('GET', `/agents/${agentId}/mcp`)).body.servers[0].logs as string[];
  t.ok(
    logs.some((line) => /elicitation link-1 is complete/.test(line)),
    'the completion notification',
  );
  const completed = await log.waitFor((e) => e.event_type === 'mcp.elicitation.completed', 'the wait ended', { from });
  t.match(completed.payload, { server: 'asker', tool: 'open_link', elicitation_id: 'link-1', outcome: 'completed' });
});

t.test('agt approvals lists the form’s fields; agt answer answers it', async (t) => {
  const from = log.events.length;
  const result = driver.run(d, agentId, 'mcp_asker_signup', {});
  const ask = await nextAsk(from);
  const env = { AGT_DAEMON_URL: d.url, AGT_DAEMON_TOKEN: d.token, NO_COLOR: '1' };
  const listed = await agtInProcess(['approvals'], env);
  t.equal(listed.code, 0, listed.stderr);
  t.match(listed.stdout, ask.requestId);
  t.match(listed.stdout, /email "Email" \(string, email; required\): where the invoice goes/, 'a string');
  t.match(listed.stdout, /plan \(one of: "free", "pro"; optional, default "free"\)/, 'an enum with its default');
  t.match(listed.stdout, /seats \(integer; optional, default 1\)/, 'a number with its default');
  t.match(listed.stdout, /newsletter \(boolean; optional\)/, 'a boolean');
  t.match(listed.stdout, `answer: agt answer ${ask.requestId} '{"email":"…"}' (or decline / cancel)`, 'how to answer');
  t.notMatch(listed.stdout, /Answer with a JSON object/, 'the fields come from the schema, not the question text');
  const answered = await agtInProcess(['answer', ask.requestId, '{"email": "cli@example.com", "seats": 3}'], env);
  t.equal(answered.code, 0, answered.stderr);
  t.same(JSON.parse(await result), {
    action: 'accept',
    content: { email: 'cli@example.com', seats: 3, plan: 'free' },
  });
});

t.test('unanswered: cancelled after the owner’s limit, the ask withdrawn', async (t) => {
  const from = log.events.length;
  const result = driver.run(d, agentId, 'mcp_asker_signup', {});
  const ask = await nextAsk(from);
  t.same(JSON.parse(await result), { action: 'cancel' });
  const resolved = await log.waitFor(
    (e) => e.event_type === 'hil.resolved' && (e.payload as { id: string }).id === ask.requestId,
    'the ask withdrawn',
    { from },
  );
  t.equal((resolved.payload as { resolution: string }).resolution, 'cancelled');
  t.equal((await answer(ask.requestId, 'late')).status, 404, 'a late answer finds nothing to answer');
});

t.test('a pending elicitation survives a restart: the resumed turn asks the same ask', async (t) => {
  const from = log.events.length;
  const result = driver.run(d, agentId, 'mcp_asker_signup', {});
  const before = await nextAsk(from);
  d = await d.restart();
  log = await eventLog(t, d, '?since=0');
  t.equal((await d.request('POST', '/agents/load', { filePath })).status, 200, 'the agent loads again');
  // The ask's schema comes from the agent file: the resumed turn takes up the same ask, it does not make one.
  const tasks = (await d.request('GET', '/tasks?kind=ask')).body.tasks as Array<{ id: string; schema?: unknown }>;
  t.same(tasks.find((task) => task.id === before.requestId)?.schema, before.schema, 'GET /tasks shows its form');
  // The resumed turn waits for the agent's servers, runs the call again, and the server asks again.
  const again = await nextAsk(0);
  t.equal(again.requestId, before.requestId, 'the same ask, announced again');
  t.same(again.schema, before.schema, 'with its schema');
  await answer(again.requestId, '{"email": "owner@example.com"}');
  t.match(JSON.parse(await result), { action: 'accept', content: { email: 'owner@example.com' } });
});
