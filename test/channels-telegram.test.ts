/**
 * Telegram end to end against a fake Bot API (grammy with `apiRoot`): the adapter waits in `error` for its
 * sealed token, connects once it is set; a direct message with a file becomes an inbox row, the file an
 * agent file, the `on_inbox` turn replies through `msg_send` in the same chat (threaded to the message);
 * a stranger is refused by the policy; a file over the limit is refused with a note the agent reads;
 * a rate-limit answer is waited out; the server going away and coming back is a reconnect.
 */
import t from 'tap';
import { channelsRig, eventually } from './helpers/channels.js';
import { startFakeTelegram } from './fakes/telegram.js';

t.test('telegram: in, turn, reply out; policy; attachment limit; rate limit; reconnect', async (t) => {
  const telegram = await startFakeTelegram(t);
  const rig = await channelsRig(t, { telegram: { apiRoot: telegram.apiRoot } });
  const { d, agentId } = rig;

  const put = await d.request('PUT', `/agents/${agentId}/adapters/telegram`, {
    enabled: true,
    policy: { dm: 'allowlist', allow_from: ['42'], groups: 'mention' },
    limits: { max_attachment_size: 1000 },
  });
  t.equal(put.status, 200, JSON.stringify(put.body));
  const locked = await rig.waitStatus('telegram', 'error');
  t.match(
    locked.error,
    /adapter:telegram:TELEGRAM_BOT_TOKEN is not set/,
    'a missing credential is status error with the reason',
  );

  t.equal(
    (
      await d.request('PUT', `/agents/${agentId}/credentials/adapter:telegram:TELEGRAM_BOT_TOKEN`, {
        value: telegram.token,
      })
    ).status,
    200,
  );
  const connected = await rig.waitStatus('telegram', 'connected');
  t.type(connected.connectedAt, 'number');
  const channels = (await d.request('GET', '/channels')).body;
  t.same(
    channels.types.find((type: any) => type.type === 'telegram'),
    { type: 'telegram', credentials: ['adapter:telegram:TELEGRAM_BOT_TOKEN'], maxTextLength: 4096 },
  );
  t.match(channels.agents, [{ agentId, adapters: [{ type: 'telegram', enabled: true, status: 'connected' }] }]);

  // A direct message from an allowed sender, with a small file.
  const small = telegram.addFile(Buffer.from('hello file'));
  const first = telegram.inject({
    chat: { id: 42, type: 'private' },
    from: { id: 42, is_bot: false, first_name: 'Ann', username: 'ann' },
    caption: 'hello agent',
    document: {
      file_id: small,
      file_unique_id: small,
      file_name: '../../notes.txt',
      mime_type: 'text/plain',
      file_size: 10,
    },
  });
  const sent = await eventually('the reply on Telegram', () => telegram.sent[0]);
  t.equal(String(sent.chat_id), '42');
  t.equal(sent.text, 'echo: hello agent');
  t.same(
    sent.reply_parameters,
    { message_id: first, allow_sending_without_reply: true },
    'the reply is threaded to the message by parent_id',
  );
  const [row] = await rig.inbox();
  t.match(row, { source: 'channel:telegram', sender: 'telegram:42' });
  t.match(row.data, {
    from: 'telegram:42',
    chat: 'telegram:42',
    chat_kind: 'dm',
    message_id: String(first),
    attachments: [{ name: '../../notes.txt', size: 10, mime_type: 'text/plain' }],
  });
  const stored = row.data.attachments[0].path as string;
  t.match(stored, /^inbox\/telegram\/[^/]+notes\.txt$/, 'a hostile file name stays one segment under inbox/telegram/');
  const file = await d.request('GET', `/agents/${agentId}/files/content?path=${encodeURIComponent(stored)}`);
  t.equal(file.body.content, 'hello file');
  const delivered = await eventually('the outbox row delivered', async () =>
    (await rig.outbox()).find((m: any) => m.status === 'delivered'),
  );
  t.match(delivered, { channel: 'telegram', recipient: 'telegram:42' });

  // A stranger's direct message: refused by the policy, no row, no turn, a log row.
  const before = rig.model.chatRequests().length;
  telegram.inject({
    chat: { id: 7, type: 'private' },
    from: { id: 7, is_bot: false, first_name: 'Eve' },
    text: 'let me in',
  });
  await eventually('the refusal in the agent log', async () =>
    (await d.request('GET', `/agents/${agentId}/logs`)).body.logs.find((l: any) =>
      /telegram message from telegram:7 refused: the sender is not in policy.allow_from/.test(l.message),
    ),
  );
  // A group message that does not mention the bot: refused too.
  telegram.inject({
    chat: { id: -100, type: 'group', title: 'g' },
    from: { id: 42, is_bot: false, first_name: 'Ann' },
    text: 'chatter',
  });
  await eventually('the group refusal', async () =>
    (await d.request('GET', `/agents/${agentId}/logs`)).body.logs.find((l: any) =>
      /refused: the bot was not mentioned/.test(l.message),
    ),
  );
  t.equal((await rig.inbox()).length, 1, 'refused messages leave no inbox row');
  t.equal(rig.model.chatRequests().length, before, 'and run no turn');

  // A file over the limit (1000 bytes): not downloaded, not stored, a note the agent reads; the reply is rate limited
  // once.
  const big = telegram.addFile(Buffer.alloc(5000, 1));
  telegram.rateLimitNext(1);
  telegram.inject({
    chat: { id: 42, type: 'private' },
    from: { id: 42, is_bot: false, first_name: 'Ann' },
    caption: 'big one',
    document: { file_id: big, file_unique_id: big, file_name: 'big.bin', file_size: 5000 },
  });
  const second = await eventually('the second inbox row', async () => (await rig.inbox())[1]);
  t.match(second.text, /attachment "big\.bin" refused: larger than the 1000 bytes limit/);
  t.same(second.data.attachments, []);
  t.match(second.data.refused_attachments, [{ name: 'big.bin', size: 5000 }]);
  t.notOk(
    telegram.calls.includes('getFile') && telegram.calls.filter((c) => c === 'getFile').length > 1,
    'the big file was never fetched',
  );
  const afterLimit = await eventually('the rate-limited reply', () => telegram.sent[1]);
  t.equal(afterLimit.text, 'echo: big one');
  const retried = await eventually('the retried row', async () =>
    (await rig.outbox()).find((m: any) => m.id === 2 && m.status === 'delivered'),
  );
  t.match(
    retried,
    { attempts: 2, status_code: 429 },
    'the rate-limited try (its 429 kept) and the one that went through',
  );

  // The server goes away: the adapter notices and reconnects when it is back.
  await telegram.goAway();
  const lost = await rig.waitStatus('telegram', ['connecting', 'error']);
  t.ok(
    lost.recentErrors.some((e: { message: string }) => /connection lost: Telegram getUpdates failed/.test(e.message)),
    'the lost connection is among the recent errors',
  );
  await telegram.comeBack();
  const back = await rig.waitStatus('telegram', 'connected');
  t.ok(back.restartCount >= 1, 'the reconnect is counted');
  telegram.inject({
    chat: { id: 42, type: 'private' },
    from: { id: 42, is_bot: false, first_name: 'Ann' },
    text: 'still there?',
  });
  const third = await eventually('the reply after the reconnect', () => telegram.sent[2]);
  t.equal(third.text, 'echo: still there?');

  // Disabling stops it without a restart.
  t.equal((await d.request('PUT', `/agents/${agentId}/adapters/telegram`, { enabled: false })).status, 200);
  t.match(await rig.adapter('telegram'), { enabled: false, status: 'disconnected' });

  // Back on, then shut down while the server is away and the adapter is reconnecting: the daemon stops cleanly.
  t.equal(
    (await d.request('PUT', `/agents/${agentId}/adapters/telegram`, { enabled: true, policy: { dm: 'all' } })).status,
    200,
  );
  await rig.waitStatus('telegram', 'connected');
  await telegram.goAway();
  await rig.waitStatus('telegram', ['connecting', 'error']);
  t.equal(await d.stop(), 0, 'the daemon stops cleanly while the adapter is reconnecting');
});
