/**
 * Owner tasks on Discord against the fake REST API and gateway: an approval is posted in the direct-message
 * channel opened with the owner, with button components whose custom_id is an opaque token; a press
 * (INTERACTION_CREATE) by another user is answered with an ephemeral refusal and the task stays open; the
 * owner's press approves it and the post is edited without its components; a task answered in the console
 * is edited too; an ask is answered by replying to its post.
 */
import t from 'tap';
import { channelsRig, eventually } from './helpers/channels.js';
import { pendingApproval, task } from './helpers/owner-tasks.js';
import { startFakeDiscord } from './fakes/discord.js';

const OWNER = '500000000000000001';
const owner = { id: OWNER, username: 'owner', discriminator: '0', global_name: null, avatar: null };

t.test('discord: approvals answered by the owner only, edited when closed elsewhere; an ask by reply', async (t) => {
  const discord = await startFakeDiscord(t);
  const rig = await channelsRig(t, { discord: { api: discord.api } }, [], { owners: { discord: OWNER } });
  const { d, agentId } = rig;
  await d.request('PUT', `/agents/${agentId}/credentials/adapter:discord:DISCORD_BOT_TOKEN`, { value: discord.token });
  await d.request('PUT', `/agents/${agentId}/adapters/discord`, { enabled: true, policy: { dm: 'none' } });
  await rig.waitStatus('discord', 'connected');

  const approval = await pendingApproval(rig, 'via_discord');
  const post = await eventually('the approval posted to the owner', () =>
    discord.posted.find((m) => m.body.components?.length),
  );
  t.equal(post.channel, discord.dms.get(OWNER), 'posted in the direct messages with the owner');
  t.match(post.body.content, /wants to run sys_set_meta/);
  const buttons = post.body.components.flatMap((row: any) => row.components);
  t.same(
    buttons.map((button: any) => button.label),
    ['Approve', 'Always allow sys_set_meta', 'Deny'],
  );
  for (const button of buttons) t.notOk(button.custom_id.includes(approval.id), 'no task id in the custom_id');
  const approve = buttons[0].custom_id;

  const stranger = discord.press('500000000000000777', post.channel, post.body.id, approve);
  const refused = await eventually('the refusal', () =>
    discord.interactionReplies.find((r) => r.interaction === stranger),
  );
  t.equal(refused.body.type, 4, 'a channel message answer');
  t.match(refused.body.data.content, /Only the owner/);
  t.equal(refused.body.data.flags, 64, 'ephemeral: only the presser sees it');
  t.equal((await task(rig, approval.id)).status, 'pending_approval', "a stranger's press leaves the task open");

  const pressed = discord.press(OWNER, post.channel, post.body.id, approve);
  const taken = await eventually('the approval taken', () =>
    discord.interactionReplies.find((r) => r.interaction === pressed),
  );
  t.equal(taken.body.data.content, 'Approved.');
  await eventually('the approved call run', async () => (await task(rig, approval.id)).status === 'completed');
  const edit = await eventually('the post edited', () => discord.edits.find((e) => e.message === post.body.id));
  t.match(edit.body.content, /Approved\.$/);
  t.same(edit.body.components, [], 'the buttons are gone');

  const second = await pendingApproval(rig, 'via_console');
  const secondPost = await eventually('the second approval posted', () =>
    discord.posted.find((m) => m.body.components?.length && m.body.content.includes('via_console')),
  );
  await d.request('POST', `/agents/${agentId}/tasks/${second.id}/resolve`, { action: 'deny' });
  const secondEdit = await eventually('the second post edited', () =>
    discord.edits.find((e) => e.message === secondPost.body.id),
  );
  t.match(secondEdit.body.content, /Denied\.$/);

  await d.request('POST', `/agents/${agentId}/chat`, { text: 'call ask {"question":"Which colour?"}' });
  const askPost = await eventually('the ask posted', () =>
    discord.posted.find((m) => m.body.content?.includes('Which colour?')),
  );
  discord.inject({
    channel_id: askPost.channel,
    channel_type: 1,
    author: owner,
    content: 'green',
    message_reference: { message_id: askPost.body.id, channel_id: askPost.channel },
  });
  const receipt = await eventually('the receipt', () => discord.posted.find((m) => m.body.content === 'Answered.'));
  t.equal(receipt.channel, askPost.channel);
  await eventually('the ask post edited', () => discord.edits.find((e) => e.message === askPost.body.id));
  t.same((await d.request('GET', `/agents/${agentId}/asks`)).body.asks, [], 'the ask is answered');
  t.same(await rig.inbox(), [], 'the reply was an answer, not an inbox message');
});
