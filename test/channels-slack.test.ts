/**
 * Slack end to end against a fake Web API and socket-mode WebSocket (Bolt with `slackApiUrl`): a DM event
 * becomes an inbox row and a turn whose reply is posted in the message's thread; a channel message that
 * does not mention the bot is refused; a file over the limit is refused with a note; a rate-limit answer is
 * waited out (Retry-After); the server going away and coming back is a reconnect.
 */
import t from 'tap';
import { channelsRig, eventually } from './helpers/channels.js';
import { SLACK_BOT_USER, startFakeSlack } from './fakes/slack.js';

t.test('slack: in, turn, reply out; policy; attachment limit; rate limit; reconnect', async (t) => {
  const slack = await startFakeSlack(t);
  const rig = await channelsRig(t, { slack: { apiUrl: slack.apiUrl } });
  const { d, agentId } = rig;
  for (const [key, value] of [
    ['SLACK_BOT_TOKEN', slack.botToken],
    ['SLACK_APP_TOKEN', slack.appToken],
  ]) {
    t.equal((await d.request('PUT', `/agents/${agentId}/credentials/adapter:slack:${key}`, { value })).status, 200);
  }
  const put = await d.request('PUT', `/agents/${agentId}/adapters/slack`, {
    enabled: true,
    policy: { dm: 'all', groups: 'mention' },
    limits: { max_attachment_size: 100 },
  });
  t.equal(put.status, 200, JSON.stringify(put.body));
  await rig.waitStatus('slack', 'connected');
  await eventually('the socket', () => slack.connected() === 1);

  const file = slack.addFile(Buffer.from('tiny'), 'tiny.txt');
  const ts = slack.inject({
    channel: 'D1',
    channel_type: 'im',
    user: 'U42',
    text: 'hello slack',
    subtype: 'file_share',
    files: [file],
  });
  const posted = await eventually('the reply on Slack', () => slack.posted[0]);
  t.match(posted, { channel: 'D1', text: 'echo: hello slack' });
  t.ok(slack.acks.includes('env-1'), 'the envelope was acknowledged');
  const [row] = await rig.inbox();
  t.match(row, {
    source: 'channel:slack',
    sender: 'slack:U42',
    data: { chat: 'slack:D1', chat_kind: 'dm', message_id: ts, attachments: [{ name: 'tiny.txt', size: 4 }] },
  });
  t.equal(
    (
      await d.request(
        'GET',
        `/agents/${agentId}/files/content?path=${encodeURIComponent(row.data.attachments[0].path)}`,
      )
    ).body.content,
    'tiny',
  );
  await eventually('delivered', async () => (await rig.outbox()).find((m: any) => m.status === 'delivered'));

  // In a channel without a mention: refused. With one (and a file too big): in, with a note; the reply is rate limited
  // once.
  slack.inject({ channel: 'C1', channel_type: 'channel', user: 'U42', text: 'just chatting' });
  await eventually('the refusal', async () =>
    (await d.request('GET', `/agents/${agentId}/logs`)).body.logs.find((l: any) =>
      /slack message from slack:U42 refused: the bot was not mentioned/.test(l.message),
    ),
  );
  t.equal((await rig.inbox()).length, 1);
  slack.rateLimitNext(1);
  const big = slack.addFile(Buffer.alloc(500, 1), 'big.bin');
  const mentionTs = slack.inject({
    channel: 'C1',
    channel_type: 'channel',
    user: 'U42',
    text: `<@${SLACK_BOT_USER}> look`,
    subtype: 'file_share',
    files: [big],
  });
  const second = await eventually('the second row', async () => (await rig.inbox())[1]);
  t.match(second.text, /attachment "big\.bin" refused: larger than the 100 bytes limit/);
  t.match(second.data, { chat_kind: 'group', mentioned: true, attachments: [] });
  const reply = await eventually('the rate-limited reply', () => slack.posted[1]);
  t.match(reply, { channel: 'C1', thread_ts: mentionTs }, 'posted in the thread of the message answered');
  const row2 = await eventually('delivered after the wait', async () =>
    (await rig.outbox()).find((m: any) => m.id === 2 && m.status === 'delivered'),
  );
  t.equal(row2.attempts, 2, 'the rate-limited try and the one that went through');

  // Away and back.
  await slack.goAway();
  await rig.waitStatus('slack', ['connecting', 'error']);
  await slack.comeBack();
  const back = await rig.waitStatus('slack', 'connected', 20_000);
  t.ok(back.restartCount >= 1);
  await eventually('the socket again', () => slack.connected() === 1);
  slack.inject({ channel: 'D1', channel_type: 'im', user: 'U42', text: 'back?' });
  t.match(await eventually('the reply after the reconnect', () => slack.posted[2]), { text: 'echo: back?' });

  t.same((await d.request('DELETE', `/agents/${agentId}/adapters/slack`)).body, { agentId, success: true });
  t.same((await d.request('GET', `/agents/${agentId}/adapters`)).body, { agentId, adapters: [] });
  await eventually('the socket closed', () => slack.connected() === 0);

  // Back on, then shut down while the server is away and the adapter is reconnecting: the daemon stops cleanly.
  t.equal(
    (await d.request('PUT', `/agents/${agentId}/adapters/slack`, { enabled: true, policy: { dm: 'all' } })).status,
    200,
  );
  await rig.waitStatus('slack', 'connected');
  await slack.goAway();
  await rig.waitStatus('slack', ['connecting', 'error']);
  t.equal(await d.stop(), 0, 'the daemon stops cleanly while the adapter is reconnecting');
});
