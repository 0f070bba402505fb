/**
 * A2A on the mesh server: the official SDK's v1.0 client and its v0.3 client against a daemon
 * (send, stream, get, cancel, input-required on an ask), signed agent cards (a tampered one fails),
 * visibility, allow and block lists, the sender proof, and two daemons talking A2A on loopback
 * (`msg_send` to the other's card URL, the reply in the inbox). Two built daemons for the whole file; the
 * model is a fake OpenAI-format server whose reply depends on the message.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { ClientFactory } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { verifyAgentCardSignature } from '@a2a-js/sdk';
import { canonicalJson, formatSignature } from '../contracts/agent-keys.js';
import { didKey, signedAsServed } from './helpers/a2a-card.js';
import { sign } from 'node:crypto';
import { reply } from './fakes/openai.js';
import { bootMeshDaemon, createMeshAgent, eventually, testKey, type MeshDaemon } from './helpers/mesh.js';
import { startToolDriver } from './helpers/tool-driver.js';

const MESH = { retryBaseMs: 50, retryMaxMs: 200, maxAttempts: 3, rateLimit: 15, mdns: { enabled: false } };
/**
 * Replies by the message: `please ask` asks, `please hang` never answers, `please write` writes, else it echoes the
 * text.
 */
const driver = await startToolDriver(t, (request) => {
  const last = (request.body.messages as Array<{ role: string; content: unknown; tool_call_id?: string }>).at(-1)!;
  if (last.role === 'tool')
    return reply.text(String(last.tool_call_id).startsWith('ask-') ? `answered: ${String(last.content)}` : 'wrote it');
  const content = String(last.content);
  if (content.includes('please ask'))
    return reply.toolCalls([{ id: `ask-${Date.now()}`, name: 'ask', args: { question: 'Which colour?' } }]);
  if (content.includes('please write'))
    return reply.toolCalls([
      { id: `write-${Date.now()}`, name: 'fs_write', args: { path: 'notes/a.txt', content: 'x' } },
    ]);
  if (content.includes('please hang')) return reply.stall();
  const said = /"text":"((?:[^"\\]|\\.)*)"/.exec(content)?.[1] ?? content;
  return reply.text(`echo: ${said}`);
});

async function daemon(
  settings: Record<string, unknown> = {},
  meshConfig: Record<string, unknown> = MESH,
): Promise<MeshDaemon> {
  return bootMeshDaemon(t, { meshConfig, settings: { providers: [driver.provider], ...settings } });
}
const agentConfig = (extra: Record<string, unknown> = {}) => ({
  model: driver.model,
  tools: [
    { name: 'ask', enabled: true },
    { name: 'msg_send', enabled: true },
  ],
  ...extra,
});

const d1 = await daemon();
const echo = await createMeshAgent(
  d1,
  'Echo',
  agentConfig({
    handle: 'echo',
    description: 'Says back what it hears',
    messaging: { skills: [{ id: 'echo', name: 'Echo', description: 'repeats', tags: ['test'] }] },
  }),
);
const hidden = await createMeshAgent(d1, 'Hidden', agentConfig({ handle: 'hidden', messaging: { visibility: 'off' } }));
const friend = testKey();
const picky = await createMeshAgent(
  d1,
  'Picky',
  agentConfig({ handle: 'picky', messaging: { allow_list: [friend.did] } }),
);
const grumpy = await createMeshAgent(
  d1,
  'Grumpy',
  agentConfig({ handle: 'grumpy', messaging: { block_list: [friend.did] } }),
);
const careful = await createMeshAgent(
  d1,
  'Careful',
  agentConfig({ handle: 'careful', tools: [{ name: 'fs_write', enabled: true, restricted: true }] }),
);
const _busy = await createMeshAgent(d1, 'Busy', agentConfig({ handle: 'busy' }));
const cardUrl = (handle: string) => `${d1.meshUrl}/agents/${handle}/.well-known/agent-card.json`;
const a2aUrl = (handle: string) => `${d1.meshUrl}/agents/${handle}/a2a`;

let counter = 0;
const textMessage = (text: string, extra: Record<string, unknown> = {}) =>
  ({
    messageId: `m-${process.pid}-${++counter}`,
    contextId: '',
    taskId: '',
    role: 1,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  }) as any;
const sendParams = (message: any, returnImmediately = false) =>
  ({
    tenant: '',
    message,
    configuration: {
      acceptedOutputModes: [],
      returnImmediately,
      taskPushNotificationConfig: undefined,
      historyLength: undefined,
    },
    metadata: undefined,
  }) as any;
/** A stream event's task or update (the clients yield `{payload: {$case, value}}`). */
const unwrap = (event: any) => event?.payload?.value ?? event;
const statusText = (task: any) => task.status?.message?.parts?.map((part: any) => part.content?.value).join('') ?? '';
/** A completed task's answer: its output, the `reply` artifact. */
const answerText = (task: any) =>
  (task.artifacts ?? []).flatMap((a: any) => a.parts.map((part: any) => part.content?.value)).join('');
const STATE = { working: 2, completed: 3, canceled: 5, inputRequired: 6 };

/** A verifier that takes the card exactly as received (no proto form). */
const wholeCardVerifies = (card: any) => signedAsServed(card);

t.test(
  'agent cards: v1.0 and v0.3 shapes, signed by the agent key, the daemon card lists the visible agents',
  async (t) => {
    const card = await (await fetch(cardUrl('echo'), { headers: { 'A2A-Version': '1.0' } })).json();
    t.match(card, {
      name: 'Echo',
      description: 'Says back what it hears',
      capabilities: { streaming: true },
      supportedInterfaces: [
        { url: a2aUrl('echo'), protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: a2aUrl('echo'), protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
        { protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ],
      skills: [{ id: 'echo', name: 'Echo', tags: ['test'] }],
    });
    t.equal(card.url, undefined, 'the v1.0 card has no v0.3 members');
    t.equal(JSON.parse(Buffer.from(card.signatures[0].protected, 'base64url').toString()).kid.split('#')[0], echo.did);
    await t.resolves(verifyAgentCardSignature(didKey)(card), "the SDK's verifier accepts the signature");
    await t.rejects(
      verifyAgentCardSignature(didKey)({ ...card, description: 'Says something else' }),
      'a tampered card does not verify',
    );
    const legacy = await (await fetch(cardUrl('echo'))).json();
    t.match(legacy, { url: a2aUrl('echo'), protocolVersion: '0.3', preferredTransport: 'JSONRPC' });
    t.ok(wholeCardVerifies(legacy), 'a verifier of the whole v0.3 card as served accepts it');
    t.notOk(wholeCardVerifies({ ...legacy, url: 'http://elsewhere.example/a2a' }), 'its url is covered');
    t.notOk(
      wholeCardVerifies({ ...legacy, signatures: card.signatures }),
      "the v1.0 card's signature alone does not cover the v0.3 members",
    );
    await t.resolves(verifyAgentCardSignature(didKey)(legacy), "the v1.0 SDK's verifier accepts the v0.3 card too");
    t.ok(wholeCardVerifies(card), 'the v1.0 card verifies as served');
    const listing = await (await fetch(`${d1.meshUrl}/.well-known/agent-card.json`)).json();
    t.same(listing.agents.map((agent: any) => agent.handle).sort(), ['busy', 'careful', 'echo', 'grumpy', 'picky']);
    t.equal(listing.agents.find((agent: any) => agent.handle === 'echo').card, cardUrl('echo'));
  },
);

t.test('v1.0 client: send, get, stream, input-required on an ask, cancel', async (t) => {
  const client = await new ClientFactory().createFromUrl(cardUrl('echo'), '');
  const task: any = await client.sendMessage(sendParams(textMessage('hello there')));
  t.equal(task.status.state, STATE.completed);
  t.equal(task.artifacts[0].parts[0].content.value, 'echo: hello there');
  t.equal(task.artifacts.length, 1, 'the answer is one artifact');
  t.equal(task.status.message, undefined, 'and not also the status message (a client showing both shows it once)');
  t.notOk(
    task.history.some((message: any) => message.role === 2),
    'nor a message in the history: the answer is the output',
  );
  const history = (await d1.request('GET', `/agents/${echo.id}/chat`)).body.llmMessages;
  t.ok(
    history.some((row: any) => row.turnId === task.id),
    'the task id is the turn id',
  );
  t.match(await client.getTask({ tenant: '', id: task.id } as any), {
    id: task.id,
    status: { state: STATE.completed },
  });

  const events: any[] = [];
  for await (const event of client.sendMessageStream(sendParams(textMessage('streamed')))) events.push(unwrap(event));
  t.ok('id' in events[0] && 'status' in events[0], 'the stream opens with the task');
  t.equal(events.at(-1).status.state, STATE.completed);
  t.equal(events.at(-1).status.message, undefined);
  t.equal(events.find((event) => 'artifact' in event).artifact.parts[0].content.value, 'echo: streamed');

  const asking: any = await client.sendMessage(sendParams(textMessage('please ask me')));
  t.equal(asking.status.state, STATE.inputRequired);
  t.equal(statusText(asking), 'Which colour?');
  const answered: any = await client.sendMessage(
    sendParams(textMessage('blue', { taskId: asking.id, contextId: asking.contextId })),
  );
  t.equal(answered.id, asking.id);
  t.equal(answered.status.state, STATE.completed);
  t.equal(
    answerText(answered),
    'answered: The sender of the message this turn answers (not the owner) answered: blue',
    "the model is told the answer is not the owner's",
  );

  const hanging: any = await client.sendMessage(sendParams(textMessage('please hang'), true));
  await eventually(
    async () => ((await client.getTask({ tenant: '', id: hanging.id } as any)) as any).status.state === STATE.working,
    'the turn to run',
  );
  const canceled: any = await client.cancelTask({ tenant: '', id: hanging.id, metadata: undefined } as any);
  t.equal(canceled.status.state, STATE.canceled, 'cancel interrupts the turn');
  await t.rejects(client.getTask({ tenant: '', id: 'no-such-task' } as any), 'an unknown task is not found');
});

t.test('v0.3 client: message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe', async (t) => {
  const v03 = new LegacyJsonRpcTransport({ endpoint: a2aUrl('echo') });
  const task: any = await v03.sendMessage(sendParams(textMessage('old client')));
  t.equal(task.status.state, STATE.completed);
  t.equal(answerText(task), 'echo: old client');
  t.equal(statusText(task), '', 'the v0.3 task has the answer once too');
  t.match(await v03.getTask({ tenant: '', id: task.id } as any), { id: task.id, status: { state: STATE.completed } });
  const events: any[] = [];
  for await (const event of v03.sendMessageStream(sendParams(textMessage('old stream')))) events.push(unwrap(event));
  t.equal(events.at(-1).status?.state, STATE.completed);

  const asking: any = await v03.sendMessage(sendParams(textMessage('please ask, old client')));
  t.equal(asking.status.state, STATE.inputRequired);
  const answered: any = await v03.sendMessage(
    sendParams(textMessage('green', { taskId: asking.id, contextId: asking.contextId })),
  );
  t.match(answerText(answered), /\(not the owner\) answered: green$/);

  const hanging: any = await v03.sendMessage(sendParams(textMessage('please hang'), true));
  await eventually(
    async () => ((await v03.getTask({ tenant: '', id: hanging.id } as any)) as any).status.state === STATE.working,
    'the turn to run',
  );
  // Subscribed (its first event, the task, arrived) before the cancel.
  const stream = v03.resubscribeTask({ tenant: '', id: hanging.id } as any)[Symbol.asyncIterator]();
  const resubscribed: any[] = [unwrap((await stream.next()).value)];
  t.equal(resubscribed[0].status.state, STATE.working);
  t.equal(
    ((await v03.cancelTask({ tenant: '', id: hanging.id, metadata: undefined } as any)) as any).status.state,
    STATE.canceled,
  );
  for (let next = await stream.next(); !next.done; next = await stream.next()) resubscribed.push(unwrap(next.value));
  t.equal(resubscribed.at(-1).status.state, STATE.canceled, 'the resubscribed stream ends with the cancel');
});

/** A raw v1.0 JSON-RPC SendMessage. */
async function rawSend(handle: string, message: Record<string, unknown>) {
  const response = await fetch(a2aUrl(handle), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message } }),
  });
  return { status: response.status, body: await response.json() };
}
/** A message with `friend`'s sender proof for the agent `to`. */
function proved(text: string, to: string, key = friend) {
  const messageId = `p-${++counter}`;
  const at = new Date().toISOString();
  const signature = formatSignature(
    sign(null, Buffer.from(canonicalJson({ at, did: key.did, message_id: messageId, text, to })), key.privateKey),
  );
  return {
    messageId,
    role: 'ROLE_USER',
    parts: [{ text }],
    metadata: { 'agt.sender': { did: key.did, at, signature } },
  };
}

t.test('visibility, allow and block lists, sender proof', async (t) => {
  t.equal((await fetch(cardUrl('hidden'))).status, 503, 'an agent with visibility off has no card');
  t.equal((await rawSend('hidden', { messageId: 'x', role: 'ROLE_USER', parts: [{ text: 'hi' }] })).status, 503);
  t.equal((await rawSend('nobody', { messageId: 'x', role: 'ROLE_USER', parts: [{ text: 'hi' }] })).status, 404);
  const anonymous = await rawSend('picky', { messageId: 'anon-1', role: 'ROLE_USER', parts: [{ text: 'hi' }] });
  t.match(anonymous, { status: 403, body: { code: 'forbidden' } }, 'an allow list shuts out unsigned callers');
  const allowed = await rawSend('picky', proved('hi from a friend', picky.did));
  t.equal(allowed.status, 200);
  t.match(allowed.body.result.task, { status: { state: 'TASK_STATE_COMPLETED' } }, 'the allowed DID gets through');
  const forged = proved('hi from a friend', picky.did);
  forged.parts = [{ text: 'something else' }];
  t.match(await rawSend('picky', forged), { status: 403 }, 'a proof over other text is refused');
  t.match(await rawSend('picky', proved('hi', echo.did)), { status: 403 }, 'a proof for another agent is refused');
  t.match(
    await rawSend('grumpy', proved('hi', grumpy.did)),
    { status: 403, body: { code: 'forbidden' } },
    'a blocked DID is refused',
  );
  t.equal(
    (await rawSend('grumpy', { messageId: 'anon-2', role: 'ROLE_USER', parts: [{ text: 'hi' }] })).status,
    200,
    'unsigned callers reach an agent without an allow list',
  );
  void hidden;
});

t.test('two daemons: msg_send to the card URL of an agent on the other daemon, the reply in the inbox', async (t) => {
  const d2 = await daemon(
    { agentCeiling: { fetchAllowHosts: ['127.0.0.1'] } },
    { ...MESH, maxAttempts: 100, retryMaxMs: 100 },
  );
  const alice = await createMeshAgent(
    d2,
    'Alice',
    agentConfig({ handle: 'alice', security: { fetch_allow_hosts: ['127.0.0.1'] } }),
  );
  const shut = await createMeshAgent(d2, 'Shut', agentConfig({ handle: 'shut' }));
  const msgSend = (agentId: string, args: Record<string, unknown>) => driver.run(d2, agentId, 'msg_send', args);
  await msgSend(alice.id, { text: 'ping over A2A', channel: 'a2a', recipient: cardUrl('echo') });
  const [row] = await eventually(async () => {
    const messages = (await d2.request('GET', `/agents/${alice.id}/inbox`)).body.messages as any[];
    return messages.length > 0 && messages;
  }, "alice's reply");
  t.match(row, {
    source: 'a2a',
    sender: echo.did,
    text: 'echo: ping over A2A',
    data: { a2a: { card_url: cardUrl('echo'), state: 'TASK_STATE_COMPLETED', signed: true } },
  });
  const out = await eventually(async () => {
    const messages = (await d2.request('GET', `/agents/${alice.id}/outbox`)).body.messages as any[];
    return messages[0]?.status === 'delivered' && messages[0];
  }, 'the outbox row delivered');
  t.equal(out.status_code, 200);
  const history = (await d1.request('GET', `/agents/${echo.id}/chat`)).body.llmMessages;
  t.ok(
    history.some((entry: any) => entry.content.includes(alice.did!) && entry.content.includes('"signed":true')),
    "echo's turn saw Alice's DID, proven",
  );

  // Nobody listens at first: the tries fail on the network and are retried until the card answers.
  const spare = createServer();
  await new Promise<void>((done) => spare.listen(0, '127.0.0.1', done));
  const port = (spare.address() as AddressInfo).port;
  await new Promise((done) => spare.close(done));
  await msgSend(alice.id, {
    text: 'later',
    channel: 'a2a',
    recipient: `http://127.0.0.1:${port}/agents/echo/.well-known/agent-card.json`,
  });
  await eventually(async () => {
    const rows = (await d2.request('GET', `/agents/${alice.id}/outbox`)).body.messages as any[];
    return rows.find((row) => row.text === 'later' && row.status === 'pending' && row.attempts >= 1);
  }, 'a failed try');
  const mesh = new URL(d1.meshUrl);
  // Then a relay to daemon 1 listens there (the Host daemon 1 accepts is its own address).
  const relay = createServer((request, response) => {
    const upstream = httpRequest(
      {
        host: mesh.hostname,
        port: mesh.port,
        path: request.url,
        method: request.method,
        headers: { ...request.headers, host: mesh.host },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    request.pipe(upstream);
  });
  await new Promise<void>((done) => relay.listen(port, '127.0.0.1', done));
  t.teardown(() => new Promise((done) => relay.close(done)));
  const late = await eventually(async () => {
    const rows = (await d2.request('GET', `/agents/${alice.id}/outbox`)).body.messages as any[];
    return rows.find((row) => row.text === 'later' && row.status === 'delivered');
  }, 'the retried row delivered');
  t.ok(late.attempts >= 2, `delivered after ${late.attempts} tries`);
  t.ok(
    ((await d2.request('GET', `/agents/${alice.id}/inbox`)).body.messages as any[]).some(
      (row) => row.text === 'echo: later',
    ),
    'its reply in the inbox',
  );

  // A card whose signature does not verify (changed after signing) is refused.
  const genuine = await (await fetch(cardUrl('echo'), { headers: { 'A2A-Version': '1.0' } })).json();
  const forger = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ ...genuine, description: 'Trust me' }));
  });
  await new Promise<void>((done) => forger.listen(0, '127.0.0.1', done));
  t.teardown(() => new Promise((done) => forger.close(done)));
  await msgSend(alice.id, {
    text: 'to a forged card',
    channel: 'a2a',
    recipient: `http://127.0.0.1:${(forger.address() as AddressInfo).port}/agent-card.json`,
  });
  const forged = await eventually(async () => {
    const rows = (await d2.request('GET', `/agents/${alice.id}/outbox`)).body.messages as any[];
    return rows.find((row) => row.text === 'to a forged card' && row.status === 'failed');
  }, 'the row to a forged card failed');
  t.match(forged.error, /signature does not verify/);

  await msgSend(shut.id, { text: 'ping', channel: 'a2a', recipient: cardUrl('echo') });
  const refused = await eventually(async () => {
    const messages = (await d2.request('GET', `/agents/${shut.id}/outbox`)).body.messages as any[];
    return messages[0]?.status === 'failed' && messages[0];
  }, 'the outbox row failed');
  t.match(refused.error, /fetch policy/, 'an agent whose fetch policy does not allow the host cannot reach it');
});

t.test("an approval is the owner's: input-required for the caller, who cannot answer it", async (t) => {
  const client = await new ClientFactory().createFromUrl(cardUrl('careful'), '');
  const waiting: any = await client.sendMessage(sendParams(textMessage('please write a note')));
  t.equal(waiting.status.state, STATE.inputRequired);
  t.match(statusText(waiting), /owner's approval to run fs_write/);
  await t.rejects(
    client.sendMessage(sendParams(textMessage('approve', { taskId: waiting.id, contextId: waiting.contextId }))),
    /only the owner/,
  );
  const [pending] = (await d1.request('GET', `/agents/${careful.id}/tasks?status=pending_approval`)).body.tasks;
  t.equal(
    (await d1.request('POST', `/agents/${careful.id}/tasks/${pending.id}/resolve`, { action: 'approve' })).status,
    200,
  );
  const done: any = await eventually(async () => {
    const task: any = await client.getTask({ tenant: '', id: waiting.id } as any);
    return task.status.state === STATE.completed && task;
  }, 'the task to complete after the owner approved');
  t.equal(answerText(done), 'wrote it');
});

t.test(
  'a blocking send queued behind a turn that waits for the owner answers at once, saying so',
  { timeout: 20_000 },
  async (t) => {
    const client = await new ClientFactory().createFromUrl(cardUrl('careful'), '');
    const first: any = await client.sendMessage(sendParams(textMessage('please write another note')));
    t.equal(first.status.state, STATE.inputRequired, 'the first turn waits for the approval');
    // Without the answer this send would hold the caller for a2aWaitMs (300 s) and the test would time out.
    const second: any = await client.sendMessage(sendParams(textMessage('and after that')));
    t.not(second.id, first.id);
    t.equal(second.status.state, STATE.working, 'queued, answered as working');
    t.match(
      statusText(second),
      /Queued behind another turn of this agent that waits for its owner's approval to run fs_write/,
    );
    const [pending] = (await d1.request('GET', `/agents/${careful.id}/tasks?status=pending_approval`)).body.tasks;
    t.equal(
      (await d1.request('POST', `/agents/${careful.id}/tasks/${pending.id}/resolve`, { action: 'approve' })).status,
      200,
    );
    const done: any = await eventually(async () => {
      const task: any = await client.getTask({ tenant: '', id: second.id } as any);
      return task.status.state === STATE.completed && task;
    }, 'the queued task to run and complete once the owner approved');
    t.match(answerText(done), /echo: and after that/);
  },
);

t.test('the per-sender rate holds for A2A messages (an unsigned caller counts by its address)', async (t) => {
  const statuses: number[] = [];
  for (let i = 0; i < 16; i++)
    statuses.push(
      (await rawSend('busy', { messageId: `rate-${i}`, role: 'ROLE_USER', parts: [{ text: `n${i}` }] })).status,
    );
  t.same(statuses.slice(0, 15), new Array(15).fill(200));
  t.equal(statuses[15], 429);
});

t.test('a task belongs to the address that made it', async (t) => {
  const made = await rawSend('echo', { messageId: `own-${++counter}`, role: 'ROLE_USER', parts: [{ text: 'mine' }] });
  const id = made.body.result.task.id;
  /** GetTask from a given local address (127.0.0.2 is loopback too, another requester). */
  const getFrom = (localAddress: string) =>
    new Promise<any>((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'GetTask', params: { id } });
      const url = new URL(a2aUrl('echo'));
      const request = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          localAddress,
          headers: {
            'content-type': 'application/json',
            'a2a-version': '1.0',
            'content-length': Buffer.byteLength(body),
          },
        },
        (response) => {
          let text = '';
          response.on('data', (chunk) => (text += chunk));
          response.on('end', () => resolve(JSON.parse(text)));
        },
      );
      request.once('error', reject);
      request.end(body);
    });
  t.match(await getFrom('127.0.0.1'), { result: { id } });
  t.match(await getFrom('127.0.0.2'), { error: { message: /no task/ } }, 'another address does not see it');
});
