import t from 'tap';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from 'a2a-sdk-v03/client';
import { bootMeshDaemon, createMeshAgent, eventually, withMesh } from './helpers/mesh.js';
import { startA2aModel, webhook } from './helpers/a2a-fixtures.js';

const driver = await startA2aModel(t);
let d = await bootMeshDaemon(t, {
  meshConfig: { mdns: { enabled: false } },
  // Push notifications go to a webhook on this machine: the owner's ceiling and the agent allow 127.0.0.1 only.
  settings: { providers: [driver.provider], agentCeiling: { fetchAllowHosts: ['127.0.0.1'] } },
});
const echo = await createMeshAgent(d, 'Echo', {
  handle: 'echo',
  description: 'Says back what it hears',
  model: driver.model,
  tools: [{ name: 'ask', enabled: true }],
  security: { fetch_allow_hosts: ['127.0.0.1'] },
});
const port = new URL(d.meshUrl).port;
const cardUrl = () => `${d.meshUrl}/agents/echo/.well-known/agent-card.json`;

let counter = 0;
/** A v0.3 user message (`kind`, lower-case role, `kind: text` parts). */
const message = (text: string, extra: Record<string, unknown> = {}) => ({
  kind: 'message' as const,
  messageId: `sdk03-${process.pid}-${++counter}`,
  role: 'user' as const,
  parts: [{ kind: 'text' as const, text }],
  ...extra,
});
const textOf = (parts: any[] = []) => parts.map((part) => part.text ?? '').join('');
/** A completed task's answer: its artifacts' text. */
const answer = (task: any) => (task.artifacts ?? []).map((artifact: any) => textOf(artifact.parts)).join('');

t.test('the v0.3 card, send, stream, an ask answered, resubscribe and cancel', async (t) => {
  const card = await (await fetch(cardUrl())).json();
  t.match(card, { protocolVersion: '0.3', preferredTransport: 'JSONRPC', url: `${d.meshUrl}/agents/echo/a2a` });
  const client = await new ClientFactory().createFromUrl(cardUrl(), '');

  const task: any = await client.sendMessage({ message: message('hello from 0.3') });
  t.match(task, { kind: 'task', status: { state: 'completed' } });
  t.equal(answer(task), 'echo: hello from 0.3', 'the answer is the artifact');
  t.equal(textOf(task.status.message?.parts), '', 'and not also a status message');
  t.match(await client.getTask({ id: task.id }), { id: task.id, status: { state: 'completed' } });

  const events: any[] = [];
  for await (const event of client.sendMessageStream({ message: message('streamed') })) events.push(event);
  t.equal(events[0].kind, 'task', 'the stream opens with the task');
  t.equal(
    answer({ artifacts: events.filter((e) => e.kind === 'artifact-update').map((e) => e.artifact) }),
    'echo: streamed',
  );
  t.match(events.at(-1), { kind: 'status-update', final: true, status: { state: 'completed' } });

  const asking: any = await client.sendMessage({ message: message('please ask me') });
  t.equal(asking.status.state, 'input-required');
  t.equal(textOf(asking.status.message.parts), 'Which colour?');
  const answered: any = await client.sendMessage({
    message: message('teal', { taskId: asking.id, contextId: asking.contextId }),
  });
  t.equal(answered.id, asking.id, 'the answer goes to the same task');
  t.match(answer(answered), /\(not the owner\) answered: teal$/);

  const hanging: any = await client.sendMessage({
    message: message('please hang'),
    configuration: { blocking: false },
  });
  await eventually(
    async () => (await client.getTask({ id: hanging.id })).status.state === 'working',
    'the turn to run',
  );
  const stream = client.resubscribeTask({ id: hanging.id })[Symbol.asyncIterator]();
  const first: any = (await stream.next()).value;
  t.equal(first.id ?? first.taskId, hanging.id, 'the resubscribe follows the task');
  t.equal((await client.cancelTask({ id: hanging.id })).status.state, 'canceled', 'cancel interrupts the turn');
  let last: any = first;
  for (let next = await stream.next(); !next.done; next = await stream.next()) last = next.value;
  t.equal(last.status.state, 'canceled', 'the resubscribed stream ends with the cancel');
  await t.rejects(client.getTask({ id: 'no-such-task' }), 'an unknown task is not found');
});

t.test("the extended card with the owner's token; without it the SDK's getAgentCard() is refused", async (t) => {
  const owner: typeof fetch = (url, init) =>
    fetch(url, {
      ...init,
      headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${d.token}` },
    });
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: owner })],
  });
  const client = await new ClientFactory(options).createFromUrl(cardUrl(), '');
  const extended: any = await client.getAgentCard();
  t.match(extended, { name: 'Echo', supportsAuthenticatedExtendedCard: true });
  t.ok(
    extended.skills.some((skill: any) => skill.id === 'tool:ask'),
    "the extended card lists the agent's tools as skills",
  );
  const anonymous = await new ClientFactory().createFromUrl(cardUrl(), '');
  await t.rejects(anonymous.getAgentCard(), 'without the token the SDK cannot get it');
});

t.test('push notifications: set, get, list, delete; the updates reach a local webhook', async (t) => {
  const { url, calls } = await webhook(t, '127.0.0.1');
  const client = await new ClientFactory().createFromUrl(cardUrl(), '');

  const task: any = await client.sendMessage({
    message: message('push me'),
    configuration: { blocking: false, pushNotificationConfig: { id: 'with-send', url, token: 'tok-send' } },
  });
  const updates = await eventually(async () => {
    const got = calls.map((call) => JSON.parse(call.body));
    return got.some((update) => update.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED') && got;
  }, 'the completed update to reach the webhook');
  t.ok(
    updates.some((update) => update.artifactUpdate?.artifact?.parts?.[0]?.text === 'echo: push me'),
    'the answer reached the webhook',
  );
  for (const call of calls) t.equal(call.headers['x-a2a-notification-token'], 'tok-send', 'with its token');
  t.same(
    [...new Set(updates.map((update) => update.statusUpdate?.taskId).filter(Boolean))],
    [task.id],
    'the updates of that task',
  );

  const hanging: any = await client.sendMessage({
    message: message('please hang'),
    configuration: { blocking: false },
  });
  const set = await client.setTaskPushNotificationConfig({
    taskId: hanging.id,
    pushNotificationConfig: { id: 'later', url, token: 'tok-later' },
  });
  t.match(set, { taskId: hanging.id, pushNotificationConfig: { id: 'later', url } });
  t.match(await client.getTaskPushNotificationConfig({ id: hanging.id, pushNotificationConfigId: 'later' } as never), {
    pushNotificationConfig: { url, token: 'tok-later' },
  });
  const listed = await client.listTaskPushNotificationConfig({ id: hanging.id });
  t.same(
    listed.map((config) => config.pushNotificationConfig.id),
    ['later'],
  );
  const before = calls.length;
  await client.cancelTask({ id: hanging.id });
  await eventually(
    async () =>
      calls.slice(before).some((call) => JSON.parse(call.body).statusUpdate?.status?.state === 'TASK_STATE_CANCELED'),
    'the canceled update to reach the webhook',
  );
  t.equal(calls.at(-1)!.headers['x-a2a-notification-token'], 'tok-later');
  await client.deleteTaskPushNotificationConfig({ id: hanging.id, pushNotificationConfigId: 'later' });
  t.same(await client.listTaskPushNotificationConfig({ id: hanging.id }), [], 'deleted');
});

t.test('a restart between send and get: the same task, and an ask answered after it', async (t) => {
  let client = await new ClientFactory().createFromUrl(cardUrl(), '');
  const done: any = await client.sendMessage({ message: message('before the restart') });
  t.equal(done.status.state, 'completed');
  const asking: any = await client.sendMessage({ message: message('please ask again') });
  t.equal(asking.status.state, 'input-required');

  d = await withMesh(await d.restart({ MESH_PORT: port }), d.agentsDir);
  t.equal((await d.request('POST', '/agents/load', { filePath: echo.filePath })).status, 200, 'the agent loads again');
  client = await new ClientFactory().createFromUrl(cardUrl(), '');

  const again: any = await client.getTask({ id: done.id });
  t.match(again, { kind: 'task', id: done.id, contextId: done.contextId, status: { state: 'completed' } });
  t.equal(answer(again), 'echo: before the restart', 'with its answer');
  const waiting: any = await eventually(async () => {
    const task: any = await client.getTask({ id: asking.id });
    return task.status.state === 'input-required' && task;
  }, 'the asking task to wait for input again');
  t.equal(textOf(waiting.status.message.parts), 'Which colour?');
  const answered: any = await client.sendMessage({
    message: message('amber', { taskId: asking.id, contextId: asking.contextId }),
  });
  t.equal(answered.id, asking.id);
  t.equal(answered.status.state, 'completed');
  t.match(answer(answered), /answered: .*amber/, 'the restored task took the answer');
});
