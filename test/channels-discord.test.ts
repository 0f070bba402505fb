/**
 * Discord end to end against a fake REST API and gateway (discord.js with `rest.api`; the gateway URL
 * comes from `GET /gateway/bot`): a DM becomes an inbox row and a turn whose reply is posted with a
 * reference to the message; a guild message that does not mention the bot is refused, one that does
 * passes with its oversized attachment refused; a rate-limit answer is waited out; the server going away
 * and coming back is a reconnect.
 */
import t from 'tap';
import { channelsRig, eventually } from './helpers/channels.js';
import { DISCORD_BOT, GUILD_CHANNEL, GUILD_ID, startFakeDiscord } from './fakes/discord.js';

const ann = { id: '500000000000000042', username: 'ann', discriminator: '0', global_name: null, avatar: null };

t.test('discord: in, turn, reply out; policy; attachment limit; rate limit; reconnect', async (t) => {
  const discord = await startFakeDiscord(t);
  const rig = await channelsRig(t, { discord: { api: discord.api } });
  const { d, agentId } = rig;
  t.equal(
    (
      await d.request('PUT', `/agents/${agentId}/credentials/adapter:discord:DISCORD_BOT_TOKEN`, {
        value: discord.token,
      })
    ).status,
    200,
  );
  const put = await d.request('PUT', `/agents/${agentId}/adapters/discord`, {
    enabled: true,
    policy: { dm: 'allowlist', allow_from: [ann.id], groups: 'mention' },
    limits: { max_attachment_size: 100 },
  });
  t.equal(put.status, 200, JSON.stringify(put.body));
  await rig.waitStatus('discord', 'connected');

  const file = discord.addFile(Buffer.from('small'), 'small.txt');
  const first = discord.inject({
    channel_id: '700000000000000009',
    channel_type: 1,
    author: ann,
    content: 'hello discord',
    attachments: [file],
  });
  const posted = await eventually('the reply on Discord', () => discord.posted[0]);
  t.equal(posted.channel, '700000000000000009');
  t.match(posted.body, { content: 'echo: hello discord', message_reference: { message_id: first } });
  const [row] = await rig.inbox();
  t.match(row, {
    source: 'channel:discord',
    sender: `discord:${ann.id}`,
    data: { chat_kind: 'dm', message_id: first, attachments: [{ name: 'small.txt', size: 5 }] },
  });
  t.equal(
    (
      await d.request(
        'GET',
        `/agents/${agentId}/files/content?path=${encodeURIComponent(row.data.attachments[0].path)}`,
      )
    ).body.content,
    'small',
  );

  discord.inject({ channel_id: GUILD_CHANNEL, guild_id: GUILD_ID, author: ann, content: 'chatter' });
  await eventually('the refusal', async () =>
    (await d.request('GET', `/agents/${agentId}/logs`)).body.logs.find((l: any) =>
      /discord message from discord:\d+ refused: the bot was not mentioned/.test(l.message),
    ),
  );
  t.equal((await rig.inbox()).length, 1);

  discord.rateLimitNext(1);
  const big = discord.addFile(Buffer.alloc(300, 1), 'big.bin');
  discord.inject({
    channel_id: GUILD_CHANNEL,
    guild_id: GUILD_ID,
    author: ann,
    content: `<@${DISCORD_BOT.id}> see this`,
    mentions: [DISCORD_BOT],
    attachments: [big],
  });
  const second = await eventually('the second row', async () => (await rig.inbox())[1]);
  t.match(second.text, /attachment "big\.bin" refused: larger than the 100 bytes limit/);
  t.match(second.data, { chat_kind: 'group', mentioned: true, attachments: [] });
  const reply = await eventually('the rate-limited reply', () => discord.posted[1]);
  t.equal(reply.channel, GUILD_CHANNEL);
  const delivered = await eventually('delivered after the wait', async () =>
    (await rig.outbox()).find((m: any) => m.id === 2 && m.status === 'delivered'),
  );
  t.equal(delivered.attempts, 2, 'the rate-limited try and the one that went through');

  await discord.goAway();
  await rig.waitStatus('discord', ['connecting', 'error']);
  await discord.comeBack();
  const back = await rig.waitStatus('discord', 'connected', 20_000);
  t.ok(back.restartCount >= 1);
  discord.inject({ channel_id: '700000000000000009', channel_type: 1, author: ann, content: 'back?' });
  t.match((await eventually('the reply after the reconnect', () => discord.posted[2])).body, {
    content: 'echo: back?',
  });

  t.equal((await d.request('POST', `/agents/${agentId}/adapters/discord/restart`)).status, 200);
  await rig.waitStatus('discord', 'connected');
  t.equal((await d.request('POST', `/agents/${agentId}/adapters/telegram/restart`)).status, 404);

  // Shut down while discord.js is between reconnect attempts: the daemon still stops cleanly.
  await discord.goAway();
  await rig.waitStatus('discord', ['connecting', 'error']);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(await d.stop(), 0, 'the daemon stops cleanly while the adapter is reconnecting');
});
