/**
 * A2A tasks outlive a restart: they are kept in the agent's file beside their turns. With the built daemon and the
 * official SDK's clients: a completed task, one waiting on an ask and one still running are sent; the daemon
 * restarts; `GetTask` (v1.0 and v0.3) answers the same tasks, the ask is answered on the restored task, and a
 * resubscribe to the running one follows it to its end (a cancel). `ListTasks` pages the caller's tasks. The
 * HTTP+JSON binding serves the same tasks to the SDK's REST client. Push notifications reach a local webhook,
 * signed, in order, retried after a 503, and never a host the owner's fetch ceiling does not allow; the SDK's
 * v0.3 client sets, gets, lists and deletes push configs (`tasks/pushNotificationConfig/*`) too.
 */
import { createPublicKey, verify } from 'node:crypto';
import t from 'tap';
import { publicKeyFromDid } from '../contracts/agent-keys.js';
import { ClientFactory, ClientFactoryOptions, RestTransportFactory } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { bootMeshDaemon, createMeshAgent, eventually, withMesh } from './helpers/mesh.js';
import { startA2aModel, webhook } from './helpers/a2a-fixtures.js';

const driver = await startA2aModel(t);
const MESH = { mdns: { enabled: false } };
let d = await bootMeshDaemon(t, {
  meshConfig: MESH,
  // Push notifications go to webhooks on this machine: the owner's ceiling and the agent allow 127.0.0.1 only.
  settings: { providers: [driver.provider], agentCeiling: { fetchAllowHosts: ['127.0.0.1'] } },
});
const echo = await createMeshAgent(d, 'Echo', {
  handle: 'echo',
  model: driver.model,
  tools: [{ name: 'ask', enabled: true }],
  security: { fetch_allow_hosts: ['127.0.0.1'] },
});
const port = new URL(d.meshUrl).port;
const cardUrl = () => `${d.meshUrl}/agents/echo/.well-known/agent-card.json`;
const a2aUrl = () => `${d.meshUrl}/agents/echo/a2a`;

let counter = 0;
const message = (text: string, extra: Record<string, unknown> = {}) =>
  ({
    messageId: `durable-${process.pid}-${++counter}`,
    contextId: '',
    taskId: '',
    role: 1,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  }) as any;
const send = (msg: any, returnImmediately = false) =>
  ({
    tenant: '',
    message: msg,
    configuration: { acceptedOutputModes: [], returnImmediately, taskPushNotificationConfig: undefined },
    metadata: undefined,
  }) as any;
const STATE = { working: 2, completed: 3, canceled: 5, inputRequired: 6 };
const answer = (task: any) =>
  (task.artifacts ?? []).flatMap((a: any) => a.parts.map((part: any) => part.content?.value)).join('');

t.test('GetTask after a restart answers the same tasks; the ask is answered; a resubscribe follows', async (t) => {
  let client = await new ClientFactory().createFromUrl(cardUrl(), '');
  const done: any = await client.sendMessage(send(message('before the restart')));
  t.equal(done.status.state, STATE.completed);
  const asking: any = await client.sendMessage(send(message('please ask me')));
  t.equal(asking.status.state, STATE.inputRequired);
  const hanging: any = await client.sendMessage(send(message('please hang'), true));
  await eventually(
    async () => ((await client.getTask({ tenant: '', id: hanging.id } as any)) as any).status.state === STATE.working,
    'the hanging turn to run',
  );

  d = await withMesh(await d.restart({ MESH_PORT: port }), d.agentsDir);
  t.equal((await d.request('POST', '/agents/load', { filePath: echo.filePath })).status, 200, 'the agent loads again');
  client = await new ClientFactory().createFromUrl(cardUrl(), '');

  const again: any = await client.getTask({ tenant: '', id: done.id } as any);
  t.match(again, { id: done.id, contextId: done.contextId, status: { state: STATE.completed } });
  t.equal(answer(again), 'echo: before the restart', 'with its answer');
  t.match(again.history[0].parts[0].content.value, 'before the restart', "and the caller's message");

  const legacy = new LegacyJsonRpcTransport({ endpoint: a2aUrl() });
  const viaV03: any = await legacy.getTask({ tenant: '', id: done.id } as any);
  t.match(viaV03, { id: done.id, status: { state: STATE.completed } }, 'a v0.3 client gets it too');

  const waiting: any = await eventually(async () => {
    const task: any = await client.getTask({ tenant: '', id: asking.id } as any);
    return task.status.state === STATE.inputRequired && task;
  }, 'the asking task to wait for input again');
  t.equal(waiting.status.message.parts[0].content.value, 'Which colour?');
  const answered: any = await client.sendMessage(
    send(message('red', { taskId: asking.id, contextId: asking.contextId })),
  );
  t.equal(answered.id, asking.id);
  t.equal(answered.status.state, STATE.completed);
  t.match(answer(answered), /answered: .*red/, 'the restored task took the answer');

  const running: any = await client.getTask({ tenant: '', id: hanging.id } as any);
  t.equal(running.status.state, STATE.working, 'the running task is working again');
  const stream = client.resubscribeTask({ tenant: '', id: hanging.id } as any)[Symbol.asyncIterator]();
  const first: any = (await stream.next()).value;
  t.equal((first.payload?.value ?? first).id, hanging.id, 'the resubscribe opens with the task');
  const canceled: any = await client.cancelTask({ tenant: '', id: hanging.id, metadata: undefined } as any);
  t.equal(canceled.status.state, STATE.canceled);
  let last: any;
  for (let next = await stream.next(); !next.done; next = await stream.next()) last = next.value;
  t.equal((last.payload?.value ?? last).status.state, STATE.canceled, 'the stream follows it to its end');

  await t.rejects(client.getTask({ tenant: '', id: 'no-such-task' } as any), 'an unknown task is still not found');
});

t.test('ListTasks: the caller’s tasks from the kept records, newest first, by pages with a cursor', async (t) => {
  const client = await new ClientFactory().createFromUrl(cardUrl(), '');
  const made: string[] = [];
  for (const text of ['one', 'two', 'three'])
    made.push(((await client.sendMessage(send(message(`list ${text}`)))) as any).id);
  const list = (params: Record<string, unknown>) =>
    client.listTasks({
      tenant: '',
      contextId: '',
      status: 0,
      pageToken: '',
      statusTimestampAfter: undefined,
      ...params,
    } as any) as Promise<any>;
  const all = await list({ pageSize: 100 });
  t.same(
    all.tasks.slice(0, 3).map((task: any) => task.id),
    [...made].reverse(),
    'newest first',
  );
  t.equal(all.totalSize, all.tasks.length);
  t.ok(all.totalSize >= 6, 'with the tasks of before the restart');
  t.equal(all.nextPageToken, '', 'one page holds them all');
  t.same(all.tasks[0].artifacts, [], 'no artifacts unless asked');

  const first = await list({ pageSize: 2, includeArtifacts: true });
  t.same(
    first.tasks.map((task: any) => task.id),
    [made[2], made[1]],
  );
  t.equal(answer(first.tasks[0]), 'echo: list three', 'artifacts when asked');
  t.not(first.nextPageToken, '');
  t.equal(first.totalSize, all.totalSize);
  const second = await list({ pageSize: 2, pageToken: first.nextPageToken });
  t.same(
    second.tasks.map((task: any) => task.id),
    [made[0], all.tasks[3].id],
    'the next page goes on where the first ended',
  );

  const canceled = await list({ status: STATE.canceled, pageSize: 100 });
  t.ok(canceled.tasks.length >= 1);
  t.ok(
    canceled.tasks.every((task: any) => task.status.state === STATE.canceled),
    'filtered by state',
  );
  const byContext = await list({ contextId: all.tasks[0].contextId, pageSize: 100 });
  t.same(
    byContext.tasks.map((task: any) => task.id),
    [made[2]],
    'filtered by context',
  );
  await t.rejects(list({ pageToken: 'bm90LWEtbnVtYmVy' }), 'a token not of this list is refused');
});

t.test('the HTTP+JSON binding: the SDK REST client sends, streams, gets, lists and cancels', async (t) => {
  const rest = await new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new RestTransportFactory()],
      preferredTransports: ['HTTP+JSON'],
    }),
  ).createFromUrl(cardUrl(), '');
  const task: any = await rest.sendMessage(send(message('over rest')));
  t.equal(task.status.state, STATE.completed);
  t.equal(answer(task), 'echo: over rest');
  const got: any = await rest.getTask({ tenant: '', id: task.id } as any);
  t.match(got, { id: task.id, status: { state: STATE.completed } });
  t.equal(answer(got), 'echo: over rest');

  const events: any[] = [];
  for await (const event of rest.sendMessageStream(send(message('rest stream'))))
    events.push(event.payload?.value ?? event);
  t.equal(events.at(-1).status.state, STATE.completed, 'the stream ends with the completed status');
  t.equal(events.find((event) => 'artifact' in event).artifact.parts[0].content.value, 'echo: rest stream');

  const listed: any = await rest.listTasks({ tenant: '', contextId: '', status: 0, pageToken: '', pageSize: 2 } as any);
  t.equal(listed.tasks.length, 2);
  t.equal(listed.tasks[1].id, task.id, 'listed newest first');
  t.not(listed.nextPageToken, '');

  const hanging: any = await rest.sendMessage(send(message('please hang'), true));
  await eventually(
    async () => ((await rest.getTask({ tenant: '', id: hanging.id } as any)) as any).status.state === STATE.working,
    'the hanging turn to run',
  );
  const canceled: any = await rest.cancelTask({ tenant: '', id: hanging.id, metadata: undefined } as any);
  t.equal(canceled.status.state, STATE.canceled);

  await t.rejects(rest.getTask({ tenant: '', id: 'no-such-task' } as any), 'not found');
  const plain = await fetch(`${a2aUrl()}/tasks/no-such-task`);
  t.equal(plain.status, 404);
  t.match(await plain.json(), { error: { status: 'NOT_FOUND' } }, 'a google.rpc.Status body');
  const byA2aJson = await fetch(`${a2aUrl()}/message:send`, {
    method: 'POST',
    headers: { 'content-type': 'application/a2a+json', 'a2a-version': '1.0' },
    body: JSON.stringify({ message: { messageId: `raw-${process.pid}`, role: 'ROLE_USER', parts: [{ text: 'raw' }] } }),
  });
  t.equal(byA2aJson.status, 200, 'application/a2a+json is read');
  t.equal((await byA2aJson.json()).task.artifacts[0].parts[0].text, 'echo: raw', 'and answered in the JSON form');
  const pushed: any = await rest.createTaskPushNotificationConfig({
    tenant: '',
    id: 'rest-hook',
    taskId: task.id,
    url: 'http://127.0.0.1:9/hook',
    token: 't',
    authentication: undefined,
  } as any);
  t.match(pushed, { id: 'rest-hook', taskId: task.id, url: 'http://127.0.0.1:9/hook' }, 'a push config over REST');
  const configs: any = await rest.listTaskPushNotificationConfig({
    tenant: '',
    taskId: task.id,
    pageSize: 10,
    pageToken: '',
  } as any);
  t.same(
    configs.configs.map((config: any) => config.id),
    ['rest-hook'],
  );
  await rest.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'rest-hook' } as any);
  await t.rejects(
    rest.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'rest-hook' } as any),
    'deleted',
  );
  const extended = await fetch(`${a2aUrl()}/extendedAgentCard`);
  t.equal(extended.status, 401, 'no extended card without the owner token');
});

t.test('push notifications: signed, in order, retried, only to hosts the policy allows', async (t) => {
  const client = await new ClientFactory().createFromUrl(cardUrl(), '');
  const hook = await webhook(t, '127.0.0.1', 1);
  const elsewhere = await webhook(t, '127.0.0.2');
  const params = send(message('push me'), true);
  params.configuration.taskPushNotificationConfig = {
    tenant: '',
    id: 'hook-1',
    taskId: '',
    url: hook.url,
    token: 'tok-1',
    authentication: undefined,
  };
  const task: any = await client.sendMessage(params);
  await client.createTaskPushNotificationConfig({
    tenant: '',
    id: 'elsewhere',
    taskId: task.id,
    url: elsewhere.url,
    token: '',
    authentication: undefined,
  } as any);
  const listed: any = await client.listTaskPushNotificationConfig({
    tenant: '',
    taskId: task.id,
    pageSize: 10,
    pageToken: '',
  } as any);
  t.same(listed.configs.map((config: any) => config.id).sort(), ['elsewhere', 'hook-1']);
  t.match(await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'hook-1' } as any), {
    url: hook.url,
    token: 'tok-1',
  });

  const delivered = () => hook.calls.filter((call) => call.status === 200).map((call) => JSON.parse(call.body));
  const updates = await eventually(async () => {
    const got = delivered();
    return got.some((update) => update.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED') && got;
  }, 'the completed update to reach the webhook');
  t.equal(hook.calls[0]!.status, 503, 'the first call failed');
  t.same(JSON.parse(hook.calls[1]!.body), JSON.parse(hook.calls[0]!.body), 'and the same update came again');
  t.ok(
    updates.some((update) => update.artifactUpdate?.artifact?.parts?.[0]?.text === 'echo: push me'),
    'the answer',
  );
  t.equal(updates.at(-1).statusUpdate.status.state, 'TASK_STATE_COMPLETED', 'the end comes last');
  for (const call of hook.calls) {
    t.equal(call.headers['x-a2a-notification-token'], 'tok-1');
    const [protectedHeader, , signature] = String(call.headers['x-agt-signature']).split('.');
    const kid = JSON.parse(Buffer.from(protectedHeader!, 'base64url').toString()).kid as string;
    t.equal(kid.split('#')[0], echo.did, "signed by the agent's DID");
    const key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKeyFromDid(echo.did)).toString('base64url') },
      format: 'jwk',
    });
    const input = `${protectedHeader}.${Buffer.from(call.body).toString('base64url')}`;
    t.ok(verify(null, Buffer.from(input), key, Buffer.from(signature!, 'base64url')), 'the signature verifies');
  }
  t.equal(elsewhere.calls.length, 0, 'a host the fetch ceiling does not allow is never called');

  await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'hook-1' } as any);
  const after: any = await client.listTaskPushNotificationConfig({
    tenant: '',
    taskId: task.id,
    pageSize: 10,
    pageToken: '',
  } as any);
  t.same(
    after.configs.map((config: any) => config.id),
    ['elsewhere'],
  );
  await t.rejects(
    client.createTaskPushNotificationConfig({
      tenant: '',
      id: 'x',
      taskId: task.id,
      url: 'ftp://nowhere',
      token: '',
      authentication: undefined,
    } as any),
    'only http(s) webhooks',
  );
});

t.test('push notifications from a v0.3 client: tasks/pushNotificationConfig/set, get, list, delete', async (t) => {
  const v03 = new LegacyJsonRpcTransport({ endpoint: a2aUrl() });
  const hook = await webhook(t, '127.0.0.1');
  const task: any = await v03.sendMessage(send(message('please hang'), true));
  const config = {
    tenant: '',
    id: 'old-hook',
    taskId: task.id,
    url: hook.url,
    token: 'tok-03',
    authentication: undefined,
  };
  t.match(await v03.createTaskPushNotificationConfig(config as any), {
    id: 'old-hook',
    taskId: task.id,
    url: hook.url,
  });
  t.match(await v03.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'old-hook' } as any), {
    url: hook.url,
    token: 'tok-03',
  });
  const listed: any = await v03.listTaskPushNotificationConfig({ tenant: '', taskId: task.id } as any);
  t.same(
    listed.configs.map((c: any) => c.id),
    ['old-hook'],
    'listed',
  );
  await v03.cancelTask({ tenant: '', id: task.id } as any);
  const updates = await eventually(async () => {
    const got = hook.calls.map((call) => JSON.parse(call.body));
    return got.some((update) => update.statusUpdate?.status?.state === 'TASK_STATE_CANCELED') && got;
  }, 'the canceled update to reach the webhook');
  // The webhook gets the v1.0 `StreamResponse` whichever binding set the config (docs/mesh.md says so).
  t.match(updates.at(-1), { statusUpdate: { taskId: task.id, status: { state: 'TASK_STATE_CANCELED' } } }, 'the end');
  for (const call of hook.calls) t.equal(call.headers['x-a2a-notification-token'], 'tok-03', 'with its token');
  await v03.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'old-hook' } as any);
  const after: any = await v03.listTaskPushNotificationConfig({ tenant: '', taskId: task.id } as any);
  t.same(after.configs, [], 'deleted');
  await t.rejects(v03.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'old-hook' } as any), 'gone');
});
