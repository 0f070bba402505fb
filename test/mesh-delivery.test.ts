/**
 * Mesh delivery between two daemons on this machine: agent A on daemon 1 writes to agent B on
 * daemon 2 by DID; B's inbox row, its on_inbox turn (fake model) and its reply by parent_id back to A;
 * cards signed and checked; forged and wrongly keyed envelopes, unsigned ones, an oversized body and a
 * flood refused; a replay stored once; daemon 2 down while A sends, then up: delivered exactly once.
 */
import t from 'tap';
import { canonicalJson, parseSignature, verifyDidSignature } from '../contracts/agent-keys.js';
import { startFakeOpenAI, reply } from './fakes/openai.js';
import {
  bootMeshDaemon,
  createMeshAgent,
  eventually,
  postJson,
  signedEnvelope,
  testKey,
  withMesh,
  type MeshDaemon,
} from './helpers/mesh.js';
import { startToolDriver } from './helpers/tool-driver.js';

const MESH = {
  retryBaseMs: 100,
  retryMaxMs: 400,
  maxAttempts: 60,
  rateLimit: 6,
  rateWindowMs: 60_000,
  maxBodyBytes: 16_384,
  mdns: { enabled: false },
};

// Alice's model: calls msg_send as the test asks.
const driver = await startToolDriver(t);
const msgSend = (d: MeshDaemon, agentId: string, args: Record<string, unknown>) =>
  driver.run(d, agentId, 'msg_send', args);
const inbox = async (d: MeshDaemon, id: string) =>
  (await d.request('GET', `/agents/${id}/inbox`)).body.messages as any[];
const outbox = async (d: MeshDaemon, id: string) =>
  (await d.request('GET', `/agents/${id}/outbox`)).body.messages as any[];

// B's model: on the inbox message it replies by parent_id, then says it is done.
const fake = await startFakeOpenAI(t, (request) => {
  const messages = request.body.messages as any[];
  const last = messages[messages.length - 1];
  if (last.role === 'tool') return reply.text('replied');
  return reply.toolCalls([
    { name: 'msg_send', args: { text: 'pong from B', channel: 'mesh', data: { parent_id: 1 } } },
  ]);
});
const providers = [
  { id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-model' },
];

let d1 = await bootMeshDaemon(t, { meshConfig: MESH, settings: { providers: [driver.provider] } });
let d2 = await bootMeshDaemon(t, { meshConfig: MESH, settings: { providers } });
const alice = await createMeshAgent(d1, 'Alice', {
  handle: 'alice',
  model: driver.model,
  tools: [{ name: 'msg_send', enabled: true }],
});
const bob = await createMeshAgent(d2, 'Bob', {
  handle: 'bob',
  tools: [{ name: 'msg_send', enabled: true }],
  triggers: { on_inbox: { enabled: true, targets: [{ scope: 'agent' }] } },
});
// Daemon 1 knows daemon 2 as a manual peer: that is how it finds Bob's inbox by his DID.
t.equal((await d1.request('PATCH', '/settings', { meshPeers: [d2.meshUrl] })).status, 200);

t.test('cards: signed by the agent key, endpoints, listing', async (t) => {
  const card = await (await fetch(`${d2.meshUrl}/agents/bob/card`)).json();
  t.match(card, { did: bob.did, handle: 'bob', endpoints: { inbox: `${d2.meshUrl}/agents/bob/inbox` } });
  const { endpoints: _e, signature, ...signed } = card;
  t.ok(
    verifyDidSignature(bob.did, Buffer.from(canonicalJson(signed)), parseSignature(signature)!),
    'the card signature verifies against the DID',
  );
  t.notOk(
    verifyDidSignature(bob.did, Buffer.from(canonicalJson({ ...signed, handle: 'eve' })), parseSignature(signature)!),
    'a changed card does not',
  );
  t.equal(
    (await fetch(`${d2.meshUrl}/agents/${encodeURIComponent(bob.did)}/card`)).status,
    200,
    'the DID names the agent too',
  );
  t.match(await (await fetch(`${d2.meshUrl}/health`)).json(), { status: 'ok' });
  t.match(await (await fetch(`${d2.meshUrl}/agents/bob/health`)).json(), { status: 'ok', did: bob.did });
  t.same(
    (await (await fetch(`${d2.meshUrl}/agents`)).json()).agents.map((c: any) => c.handle),
    ['bob'],
  );
  t.equal((await fetch(`${d2.meshUrl}/agents/nobody/card`)).status, 404);
});

t.test('A on daemon 1 writes to B on daemon 2; B answers by parent_id', async (t) => {
  t.match(
    await msgSend(d1, alice.id, { text: 'ping from A', channel: 'mesh', recipient: bob.did }),
    /queued message 1/,
  );
  const rows = await eventually(async () => {
    const list = await inbox(d2, bob.id);
    return list.length > 0 && list;
  }, "B's inbox row");
  t.match(rows[0], { id: 1, source: 'mesh', sender: alice.did, text: 'ping from A' });
  t.match(rows[0].data.mesh, {
    from: alice.did,
    to: bob.did,
    signed: true,
    reply_to: `${d1.meshUrl}/agents/alice/inbox`,
  });
  const sent = await eventually(
    async () => (await outbox(d1, alice.id)).find((row) => row.status === 'delivered'),
    "A's outbox row delivered",
  );
  t.match(sent, { status: 'delivered', attempts: 1, status_code: 202, error: null });
  t.ok(sent.delivered_at > 0);

  const answer = await eventually(async () => (await inbox(d1, alice.id))[0], "B's reply in A's inbox");
  t.match(answer, { source: 'mesh', sender: bob.did, text: 'pong from B' });
  t.equal(answer.data.mesh.payload.parent_id, rows[0].data.mesh.id, 'the reply names the message it answers');
  const bobOut = await eventually(
    async () => (await outbox(d2, bob.id)).find((row) => row.status === 'delivered'),
    "B's reply delivered",
  );
  t.match(bobOut, { channel: 'mesh', text: 'pong from B', status_code: 202 });
  t.ok(fake.chatRequests().length >= 1, "B's on_inbox turn called the model");
});

t.test('local handles are delivered in-process with the same envelope', async (t) => {
  const carol = await createMeshAgent(d1, 'Carol', { handle: 'carol' });
  await msgSend(d1, alice.id, { text: 'hello neighbour', channel: 'mesh', recipient: 'carol' });
  const row = await eventually(async () => (await inbox(d1, carol.id))[0], "Carol's inbox row");
  t.match(row, { source: 'mesh', sender: alice.did, text: 'hello neighbour' });
  t.equal(row.data.mesh.signed, true);
  await msgSend(d1, alice.id, { text: 'to nobody', channel: 'mesh', recipient: 'nobody-here' });
  const failed = await eventually(
    async () => (await outbox(d1, alice.id)).find((r) => r.text === 'to nobody' && r.status === 'failed'),
    'an unknown handle fails',
  );
  t.match(failed.error, /cannot find where to deliver/);
});

t.test('the inbox refuses what it must', async (t) => {
  const inboxUrl = `${d2.meshUrl}/agents/bob/inbox`;
  const eve = testKey();
  const mallory = testKey();
  const before = (await inbox(d2, bob.id)).length;

  const forged = {
    ...signedEnvelope(eve, bob.did, 'original'),
    payload: { content: 'tampered', sent_at: new Date().toISOString() },
  };
  t.match(await postJson(inboxUrl, forged), { status: 403, body: { code: 'forbidden' } }, 'a changed envelope');
  t.match(
    await postJson(inboxUrl, signedEnvelope(eve, bob.did, 'hi', mallory.privateKey)),
    { status: 403 },
    'signed by another key than the sender DID',
  );
  const { signature: _s, ...unsigned } = signedEnvelope(eve, bob.did, 'hi');
  t.match(await postJson(inboxUrl, unsigned), { status: 403, body: { error: /not signed/ } }, 'unsigned');
  t.match(
    await postJson(inboxUrl, signedEnvelope(eve, 'did:key:z6MkSomeoneElse', 'hi')),
    { status: 400 },
    'addressed to another DID',
  );
  t.match(
    await postJson(inboxUrl, signedEnvelope(eve, bob.did, 'x'.repeat(20_000))),
    { status: 413, body: { code: 'payload_too_large' } },
    'oversized',
  );
  t.match(await postJson(inboxUrl, '{"version":'), { status: 400 }, 'malformed JSON');
  const old = new Date(Date.now() - 2 * 60 * 60 * 1000).toISOString();
  t.match(
    await postJson(inboxUrl, signedEnvelope(eve, bob.did, 'captured long ago', undefined, undefined, old)),
    { status: 400, body: { error: /timestamp/ } },
    'a stale copy',
  );
  t.match(
    await postJson(inboxUrl, { hello: 'world' }),
    { status: 400, body: { code: 'bad_request' } },
    'not an envelope',
  );

  const once = signedEnvelope(eve, bob.did, 'only once');
  t.match(await postJson(inboxUrl, once), { status: 202, body: { message_id: once.id, duplicate: false } });
  t.match(
    await postJson(inboxUrl, once),
    { status: 202, body: { message_id: once.id, duplicate: true } },
    'a replay is answered',
  );
  t.equal((await inbox(d2, bob.id)).filter((row) => row.text === 'only once').length, 1, 'and stored once');

  const statuses: number[] = [];
  for (let i = 0; i < 10; i++)
    statuses.push((await postJson(inboxUrl, signedEnvelope(eve, bob.did, `flood ${i}`))).status);
  t.ok(statuses.includes(429), `a flood from one sender is cut off (${statuses.join(',')})`);
  t.ok(
    statuses.slice(0, 4).every((status) => status === 202),
    'after the allowance of the window',
  );
  t.equal(
    (await postJson(inboxUrl, signedEnvelope(mallory, bob.did, 'other sender'))).status,
    202,
    'another sender is not affected',
  );

  await d2.request('PATCH', `/agents/${bob.id}/config`, {
    messaging: { mode: 'respond_only', block_list: [mallory.did] },
  });
  t.match(
    await postJson(inboxUrl, signedEnvelope(mallory, bob.did, 'blocked')),
    { status: 403, body: { error: /not allowed/ } },
    'block list',
  );
  await d2.request('PATCH', `/agents/${bob.id}/config`, {
    messaging: { mode: 'respond_only', block_list: [], allow_list: [alice.did] },
  });
  t.match(await postJson(inboxUrl, signedEnvelope(testKey(), bob.did, 'stranger')), { status: 403 }, 'allow list');
  await d2.request('PATCH', `/agents/${bob.id}/config`, { messaging: { mode: 'respond_only', allow_list: [] } });
  t.ok((await inbox(d2, bob.id)).length <= before + 6, 'nothing refused was stored');
});

t.test('scopes from peer addresses', async (t) => {
  const { scopeOf, inScope } = await import('../extensions/mesh/scope.js');
  t.same(
    [
      '127.0.0.1',
      '::1',
      '::ffff:127.0.0.2',
      '10.1.2.3',
      '192.168.0.9',
      '172.20.0.1',
      'fd00::1',
      '8.8.8.8',
      '::ffff:1.1.1.1',
      '2001:db8::1',
      undefined,
    ].map(scopeOf),
    [
      'loopback',
      'loopback',
      'loopback',
      'private',
      'private',
      'private',
      'private',
      'public',
      'public',
      'public',
      'public',
    ],
  );
  t.same(
    ['off', 'localhost', 'lan', 'public'].map((v) =>
      ['loopback', 'private', 'public'].map((s) => inScope(v as any, s as any)),
    ),
    [
      [false, false, false],
      [true, false, false],
      [true, true, false],
      [true, true, true],
    ],
  );
});

t.test('LAN on and off at runtime; a localhost agent refuses another machine', async (t) => {
  const lan = await d2.request('PUT', '/network/lan', { enabled: true });
  t.match(lan.body.mesh, { running: true, host: '0.0.0.0', lan: true });
  t.equal(lan.body.mesh.port, Number(new URL(d2.meshUrl).port), 'the port is kept across the rebind');
  const { lanAddress } = await import('../extensions/mesh/mesh-server.js');
  const address = lanAddress();
  if (address) {
    const fromLan = await fetch(`http://${address}:${lan.body.mesh.port}/agents/bob/card`);
    t.equal(fromLan.status, 403, 'a localhost agent is out of scope for a private address');
    t.equal((await fetch(`http://${address}:${lan.body.mesh.port}/health`)).status, 200);
  } else {
    t.comment('skipped the LAN request: this machine has no non-loopback IPv4 address');
  }
  t.match((await d2.request('PUT', '/network/lan', { enabled: false })).body.mesh, {
    host: '127.0.0.1',
    lan: false,
    running: true,
  });
  t.equal(
    JSON.parse((await import('node:fs')).readFileSync(`${d2.dataDir}/settings.json`, 'utf8')).meshLan,
    false,
    'persisted',
  );
});

t.test('the mesh server turns off and on without a restart', async (t) => {
  const off = await d2.request('POST', '/network/mesh/disable');
  t.match(off.body.mesh, { enabled: false, running: false, port: null });
  await t.rejects(fetch(`${d2.meshUrl}/health`), 'nothing listens');
  const on = await d2.request('POST', '/network/mesh/enable');
  t.match(on.body.mesh, { enabled: true, running: true });
  d2 = { ...d2, meshUrl: on.body.mesh.urls[0] };
  t.equal((await fetch(`${d2.meshUrl}/health`)).status, 200);
  // Port 0: the server came back on another port; daemon 1's manual peer follows it.
  t.equal((await d1.request('PATCH', '/settings', { meshPeers: [d2.meshUrl] })).status, 200);
  t.equal((await d2.request('POST', '/network/mesh/enable')).status, 200, 'enabling twice is fine');
});

t.test('an agent with lan visibility widens the bind address; localhost again narrows it', async (t) => {
  await d2.request('PATCH', `/agents/${bob.id}/config`, { messaging: { visibility: 'lan' } });
  const wide = await eventually(async () => {
    const mesh = (await d2.request('GET', '/network')).body.mesh;
    return mesh.host === '0.0.0.0' && mesh.running && mesh;
  }, 'the rebind to all interfaces');
  t.equal(wide.port, Number(new URL(d2.meshUrl).port), 'same port');
  t.match((await d2.request('GET', '/network')).body.agents, [{ handle: 'bob', visibility: 'lan', did: bob.did }]);
  await d2.request('PATCH', `/agents/${bob.id}/config`, { messaging: { visibility: 'localhost' } });
  await eventually(
    async () => (await d2.request('GET', '/network')).body.mesh.host === '127.0.0.1',
    'back to loopback',
  );
  t.equal((await fetch(`${d2.meshUrl}/health`)).status, 200);
});

t.test('visibility: off is 503, out of scope 403', async (t) => {
  await d2.request('PATCH', `/agents/${bob.id}/config`, { messaging: { visibility: 'off' } });
  t.equal((await fetch(`${d2.meshUrl}/agents/bob/card`)).status, 503);
  t.same((await (await fetch(`${d2.meshUrl}/agents`)).json()).agents, [], 'an off agent is not listed');
  await d2.request('PATCH', `/agents/${bob.id}/config`, { messaging: { visibility: 'localhost' } });
  t.equal((await fetch(`${d2.meshUrl}/agents/bob/card`)).status, 200, 'localhost sees a localhost agent');
});

t.test('daemon 2 down while A sends, then up: delivered exactly once', async (t) => {
  const meshPort = new URL(d2.meshUrl).port;
  const before = (await inbox(d2, bob.id)).length;
  await d2.stop();
  await msgSend(d1, alice.id, { text: 'while you were away', channel: 'mesh', recipient: bob.did });
  const pending = await eventually(
    async () =>
      (await outbox(d1, alice.id)).find(
        (r) => r.text === 'while you were away' && r.status === 'pending' && r.attempts >= 2,
      ),
    'failed tries counted while pending',
  );
  t.equal(pending.status_code, null, 'no receiver answered');

  d2 = await withMesh(await d2.restart({ MESH_PORT: meshPort }), d2.agentsDir);
  t.equal(d2.meshUrl, `http://127.0.0.1:${meshPort}`, 'daemon 2 is back on its mesh port');
  t.equal((await d2.request('POST', '/agents/load', { filePath: bob.filePath })).status, 200);
  const delivered = await eventually(
    async () => (await outbox(d1, alice.id)).find((r) => r.text === 'while you were away' && r.status === 'delivered'),
    'the late delivery',
  );
  t.ok(delivered.attempts >= 3);
  const rows = (await inbox(d2, bob.id)).filter((row) => row.text === 'while you were away');
  t.equal(rows.length, 1, 'exactly one inbox row');
  t.ok((await inbox(d2, bob.id)).length === before + 1);
});

t.test('a pending delivery resumes after the sender restarts and arrives once', async (t) => {
  let third = await bootMeshDaemon(t, { meshConfig: MESH });
  const dave = await createMeshAgent(third, 'Dave', { handle: 'dave' });
  const port = new URL(third.meshUrl).port;
  const target = `${third.meshUrl}/agents/dave/inbox`;
  await third.stop();
  await msgSend(d1, alice.id, { text: 'resume me', channel: 'mesh', recipient: dave.did, data: { inbox_url: target } });
  await eventually(
    async () => (await outbox(d1, alice.id)).find((r) => r.text === 'resume me' && r.attempts >= 1),
    'a failed try',
  );
  // Daemon 1 restarts; the row is pending in Alice's file and goes out again when she loads.
  const again = (d1 = await withMesh(await d1.restart(), d1.agentsDir));
  t.equal((await again.request('POST', '/agents/load', { filePath: alice.filePath })).status, 200);
  t.equal(
    (await outbox(again, alice.id)).find((r) => r.text === 'resume me').status,
    'pending',
    'still pending after the restart',
  );
  third = await withMesh(await third.restart({ MESH_PORT: port }), third.agentsDir);
  t.equal((await third.request('POST', '/agents/load', { filePath: dave.filePath })).status, 200);
  const row = await eventually(
    async () => (await outbox(again, alice.id)).find((r) => r.text === 'resume me' && r.status === 'delivered'),
    'the resumed delivery',
  );
  t.equal(row.status_code, 202);
  t.equal((await inbox(third, dave.id)).filter((r) => r.text === 'resume me').length, 1, 'one inbox row');
});
