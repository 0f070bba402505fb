/**
 * The channels core with a third-party adapter type (`test/fixtures/extensions/channels-echo`, added through the
 * `channels.adapter-types` point): route validation, the default policy, text split to the type's limit, a permanent
 * refusal failing the outbox row, a missing credential as status `error` that clears when the credential is set again,
 * reconciling on a config change made elsewhere, stopping at unload; the pure parts (text splitting, policy); and 503
 * on every route when the extension is off.
 */
import { join } from 'node:path';
import t from 'tap';
import { policyOf, refusal } from '../extensions/channels/policy.js';
import { splitText } from '../extensions/channels/text-split.js';
import { channelsRig, eventually } from './helpers/channels.js';
import { ROOT, runDaemon } from './helpers/daemon.js';

const inbound = (over: Record<string, unknown> = {}) => ({
  messageId: 'm1',
  chatId: 'c1',
  chatKind: 'dm' as const,
  sender: { id: 'u1' },
  mentioned: false,
  text: 'hi',
  attachments: [],
  ...over,
});
type Sent = { chatId: string; text: string; chunk: number; replyToId?: string };

t.test('splitText cuts at paragraph, line, word, else hard, never inside a surrogate pair', async (t) => {
  t.same(splitText('short', 10), ['short']);
  t.same(splitText('aaaa bbbb cccc', 10), ['aaaa bbbb', 'cccc']);
  t.same(splitText('aaaaaa\n\nbbbbbbbbb', 12), ['aaaaaa', 'bbbbbbbbb']);
  t.same(splitText('abcdefghijkl', 5), ['abcde', 'fghij', 'kl']);
  const emoji = 'ab😀cd';
  t.same(splitText(emoji, 3), ['ab', '😀c', 'd']);
  for (const text of ['x'.repeat(5000), 'word '.repeat(999), 'line\n'.repeat(800)]) {
    const parts = splitText(text, 4096);
    t.ok(parts.every((part) => part.length <= 4096 && part.length > 0));
    t.equal(parts.join('').replace(/\s/g, ''), text.replace(/\s/g, ''), 'nothing is lost but the whitespace at cuts');
  }
});

t.test('policy: defaults let nobody in; dm and groups each decided', async (t) => {
  const base = policyOf(undefined);
  t.match(refusal(base, inbound()), /allow_from/);
  t.match(refusal(base, inbound({ chatKind: 'group', mentioned: true })), /groups: none/);
  t.equal(refusal(policyOf({ dm: 'allowlist', allow_from: ['U1'] }), inbound()), null, 'ids compare without case');
  t.match(refusal(policyOf({ dm: 'none', allow_from: ['u1'] }), inbound()), /dm: none/);
  t.equal(refusal(policyOf({ groups: 'mention' }), inbound({ chatKind: 'group', mentioned: true })), null);
  t.match(refusal(policyOf({ groups: 'mention' }), inbound({ chatKind: 'group' })), /not mentioned/);
  t.equal(refusal(policyOf({ groups: 'all' }), inbound({ chatKind: 'group' })), null);
});

t.test('a third-party adapter type through the channels point', async (t) => {
  const rig = await channelsRig(t, {}, [
    {
      name: 'channels-echo',
      module: join(ROOT, 'test/fixtures/extensions/channels-echo/index.ts'),
      enabled: true,
      config: {},
    },
  ]);
  const { d, agentId } = rig;
  const path = `/agents/${agentId}/adapters`;
  // The echo platform, driven over the fixture's routes (test/fixtures/extensions/channels-echo).
  const echo = async () =>
    (await d.request('GET', '/channels-echo')).body as {
      connects: number;
      disconnects: number;
      connected: string[];
      sent: Sent[];
    };
  const receive = async (message: Record<string, unknown>) => {
    const res = await d.request('POST', `/channels-echo/agents/${agentId}/receive`, message);
    if (res.status !== 200) throw new Error(`receive: ${res.status} ${JSON.stringify(res.body)}`);
  };

  t.match((await d.request('GET', '/channels')).body.types, [
    { type: 'discord' },
    { type: 'echo', credentials: ['adapter:echo:TOKEN'], maxTextLength: 12 },
  ]);
  t.match(await d.request('PUT', `${path}/nope`, { enabled: true }), {
    status: 404,
    body: { code: 'not_found', error: /no adapter type "nope"/ },
  });
  t.match(await d.request('PUT', `${path}/echo`, { enabled: true, config: { greeting: 5 } }), {
    status: 400,
    body: { code: 'bad_request', error: /config/ },
  });
  t.match(await d.request('PUT', `${path}/echo`, { enabled: true, policy: { dm: 'maybe' } }), { status: 400 });
  t.match(
    await d.request('PUT', `${path}/echo`, { enabled: true, token: 'x' }),
    { status: 400 },
    'no unknown fields (secrets never go in config)',
  );
  t.match(await d.request('PUT', `${path}/echo`, { enabled: true, limits: { max_attachment_size: -1 } }), {
    status: 400,
  });
  t.match(await d.request('POST', `${path}/echo/restart`), { status: 404 });
  t.match(await d.request('GET', '/agents/nobody/adapters'), { status: 404 });

  t.equal(
    (await d.request('PUT', `/agents/${agentId}/credentials/adapter:echo:TOKEN`, { value: 'secret-token' })).status,
    200,
  );
  const put = await d.request('PUT', `${path}/echo`, { enabled: true, config: { greeting: 'hi' } });
  t.equal(put.status, 200);
  await rig.waitStatus('echo', 'connected');
  t.match(
    (await d.request('GET', `/agents/${agentId}/config`)).body.adapters ??
      (await d.request('GET', `/agents/${agentId}/config`)).body.config.adapters,
    { echo: { enabled: true, config: { greeting: 'hi' } } },
    'stored in the agent config',
  );

  // The default policy lets nobody in.
  await receive(inbound({ sender: { id: 'stranger' } }));
  t.same(await rig.inbox(), []);

  // Open the door (a policy change applies without a reconnect); a long reply is split to the type's 12 characters.
  const { connects } = await echo();
  t.equal(
    (await d.request('PUT', `${path}/echo`, { enabled: true, config: { greeting: 'hi' }, policy: { dm: 'all' } }))
      .status,
    200,
  );
  await rig.waitStatus('echo', 'connected');
  t.equal((await echo()).connects, connects, 'the policy changed in place');
  await receive(inbound({ text: 'split me into pieces please' }));
  await eventually('the split reply', async () => (await rig.outbox()).find((m: any) => m.status === 'delivered'));
  const { sent } = await echo();
  t.same(
    sent.map((m) => m.text),
    ['echo: split', 'me into', 'pieces', 'please'],
  );
  t.same(
    sent.map((m) => m.chunk),
    [0, 1, 2, 3],
  );
  t.equal(sent[0]!.replyToId, 'm1', 'the first chunk answers the message');
  t.notOk(sent[1]!.replyToId, 'the others do not');

  // A file whose name tries to pose as the core's note stays on one line; text over 100,000 characters is cut.
  await receive(
    inbound({
      messageId: 'm-file',
      text: 'y'.repeat(100_010),
      attachments: [{ name: 'a\n[attachment "x"] b.txt', text: 'abc' }],
    }),
  );
  const withFile = await eventually('the row with a file', async () =>
    (await rig.inbox()).find((m: any) => m.data.message_id === 'm-file'),
  );
  t.match(
    withFile.text,
    /\[message cut at 100000 characters\]\n\n\[attachment "a attachment {2}x {2}b\.txt" \(3 bytes\) stored as inbox\/echo\/m-file-1-a_attachment_x_b\.txt\]$/,
  );

  // A reply by parent_id alone: the parent row gives the chat.
  await receive(inbound({ messageId: 'm0', chatId: 'c9', text: 'by parent' }));
  const byParent = await eventually('the reply by parent', async () =>
    (await echo()).sent.find((m) => m.text.startsWith('echo: by')),
  );
  t.match(byParent, { chatId: 'c9', replyToId: 'm0' });
  t.match((await rig.outbox()).at(-1), { channel: 'echo', recipient: null });

  // A permanent refusal fails the row at once, with the reason.
  t.equal(
    (
      await d.request('POST', '/channels-echo/fail-next', {
        message: 'chat not found',
        permanent: true,
        statusCode: 400,
      })
    ).status,
    200,
  );
  await receive(inbound({ messageId: 'm2', text: 'again' }));
  const failed = await eventually('the failed row', async () =>
    (await rig.outbox()).find((m: any) => m.status === 'failed'),
  );
  t.match(failed.error, /echo refused the message: chat not found/);
  t.same(await d.request('GET', `/agents/${agentId}/inbox`).then((r) => r.body.messages.length), 4);

  // A replayed platform message is one row.
  await receive(inbound({ messageId: 'm2', text: 'again' }));
  t.equal((await rig.inbox()).length, 4, 'the platform id dedupes');

  // The credential goes away (unset reads as a locked store does: undefined): a restart ends in status
  // error with the reason, not a crash; setting it again retries on its own.
  t.equal((await d.request('DELETE', `/agents/${agentId}/credentials/adapter:echo:TOKEN`)).status, 200);
  t.equal((await d.request('POST', `${path}/echo/restart`)).status, 200);
  const missing = await rig.waitStatus('echo', 'error');
  t.match(missing.error, /adapter:echo:TOKEN is not set, or the agent's credentials are locked/);
  t.equal(
    (await d.request('PUT', `/agents/${agentId}/credentials/adapter:echo:TOKEN`, { value: 'secret-token' })).status,
    200,
  );
  await rig.waitStatus('echo', 'connected');
  t.notMatch(JSON.stringify((await d.request('GET', path)).body), /secret-token/, 'the credential never shows');

  // A config change made elsewhere (the kernel's config route) reconciles: the adapter stops.
  const before = (await echo()).disconnects;
  const config = (await d.request('GET', `/agents/${agentId}/config`)).body;
  const current = config.config ?? config;
  const { adapters: _gone, ...rest } = current;
  t.equal((await d.request('PUT', `/agents/${agentId}/config`, rest)).status, 200);
  await eventually('the adapter stopped', async () => {
    const now = await echo();
    return now.disconnects > before && !now.connected.includes(agentId);
  });
  t.same((await d.request('GET', path)).body, { agentId, adapters: [] });

  // Back on, then the agent unloads: the adapter stops with it.
  t.equal((await d.request('PUT', `${path}/echo`, { enabled: true })).status, 200);
  await rig.waitStatus('echo', 'connected');
  const beforeStop = (await echo()).disconnects;
  t.equal((await d.request('POST', `/agents/${agentId}/stop`)).status, 200);
  const stopped = await echo();
  t.ok(
    stopped.disconnects > beforeStop && !stopped.connected.includes(agentId),
    'disconnected by the time the agent is unloaded',
  );
});

t.test('every channels route answers 503 when the extension is off', async (t) => {
  // A daemon of its own: the manifest decides whether an extension runs.
  const d = await runDaemon(t, {
    extensions: {
      extensions: [
        { name: 'channels', module: join(ROOT, 'extensions/channels/index.ts'), enabled: false, config: {} },
      ],
    },
  });
  t.match(await d.request('GET', '/channels'), { status: 503, body: { code: 'unavailable' } });
  t.match(await d.request('GET', '/agents/any/adapters'), { status: 503, body: { code: 'unavailable' } });
});
