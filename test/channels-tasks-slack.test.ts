/**
 * Owner tasks on Slack against the fake Web API and socket mode: an approval is posted to the owner's
 * member id (the app's direct messages with them) with Block Kit buttons whose value is an opaque token;
 * a `block_actions` press by another member is refused (an ephemeral message) and the task stays open; the
 * owner's press approves it and the post is updated (`chat.update`) without its buttons; a task answered in
 * the console is updated too; an ask is answered by a reply in the post's thread.
 */
import t from 'tap';
import { channelsRig, eventually } from './helpers/channels.js';
import { pendingApproval, task } from './helpers/owner-tasks.js';
import { startFakeSlack } from './fakes/slack.js';

const OWNER = 'U0WNER';

t.test(
  'slack: approvals answered by the owner only, updated when closed elsewhere; an ask by thread reply',
  async (t) => {
    const slack = await startFakeSlack(t);
    const rig = await channelsRig(t, { slack: { apiUrl: slack.apiUrl } }, [], { owners: { slack: OWNER } });
    const { d, agentId } = rig;
    for (const [key, value] of [
      ['SLACK_BOT_TOKEN', slack.botToken],
      ['SLACK_APP_TOKEN', slack.appToken],
    ]) {
      await d.request('PUT', `/agents/${agentId}/credentials/adapter:slack:${key}`, { value });
    }
    await d.request('PUT', `/agents/${agentId}/adapters/slack`, { enabled: true, policy: { dm: 'none' } });
    await rig.waitStatus('slack', 'connected');
    await eventually('the socket', () => slack.connected() === 1);

    const approval = await pendingApproval(rig, 'via_slack');
    const post = await eventually('the approval posted to the owner', () => slack.posted.find((m) => m.blocks));
    t.equal(post.channel, OWNER, "posted to the owner's member id");
    t.match(post.text, /wants to run sys_set_meta/);
    const blocks = JSON.parse(post.blocks!);
    const buttons = blocks.find((block: any) => block.type === 'actions').elements;
    t.same(
      buttons.map((button: any) => button.text.text),
      ['Approve', 'Always allow sys_set_meta', 'Deny'],
    );
    for (const button of buttons) t.notOk(String(button.value).includes(approval.id), 'no task id in the value');
    const approve = buttons[0];
    const dm = post.posted_channel!;

    const stranger = slack.press('U0THER', dm, post.ts!, approve.action_id, approve.value);
    const refused = await eventually('the refusal', () => slack.ephemeral.find((m) => m.user === 'U0THER'));
    t.match(refused.text, /Only the owner/);
    t.equal(refused.channel, dm);
    t.ok(slack.acks.includes(stranger), 'the envelope is acknowledged');
    t.equal((await task(rig, approval.id)).status, 'pending_approval', "a stranger's press leaves the task open");

    slack.press(OWNER, dm, post.ts!, approve.action_id, approve.value);
    const taken = await eventually('the approval taken', () => slack.ephemeral.find((m) => m.user === OWNER));
    t.equal(taken.text, 'Approved.');
    await eventually('the approved call run', async () => (await task(rig, approval.id)).status === 'completed');
    const update = await eventually('the post updated', () => slack.updates.find((m) => m.ts === post.ts));
    t.match(update.text, /Approved\.$/);
    t.notOk(
      JSON.parse(update.blocks!).some((block: any) => block.type === 'actions'),
      'the buttons are gone',
    );

    const second = await pendingApproval(rig, 'via_console');
    const secondPost = await eventually('the second approval posted', () =>
      slack.posted.find((m) => m.blocks && m.text!.includes('via_console')),
    );
    await d.request('POST', `/agents/${agentId}/tasks/${second.id}/resolve`, { action: 'deny' });
    const secondUpdate = await eventually('the second post updated', () =>
      slack.updates.find((m) => m.ts === secondPost.ts),
    );
    t.match(secondUpdate.text, /Denied\.$/);

    await d.request('POST', `/agents/${agentId}/chat`, { text: 'call ask {"question":"Which colour?"}' });
    const askPost = await eventually('the ask posted', () =>
      slack.posted.find((m) => m.text?.includes('Which colour?')),
    );
    slack.inject({ channel: dm, channel_type: 'im', user: OWNER, text: 'green', thread_ts: askPost.ts });
    const receipt = await eventually('the receipt', () => slack.posted.find((m) => m.text === 'Answered.'));
    t.equal(receipt.thread_ts, askPost.ts, 'the receipt is in the thread');
    await eventually('the ask post updated', () => slack.updates.find((m) => m.ts === askPost.ts));
    t.same((await d.request('GET', `/agents/${agentId}/asks`)).body.asks, [], 'the ask is answered');
    t.same(await rig.inbox(), [], 'the reply was an answer, not an inbox message');
  },
);
