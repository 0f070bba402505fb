/**
 * Owner tasks on Telegram against the fake Bot API: an approval is posted to the owner's private chat with
 * inline buttons whose data is an opaque token (never the task id); a press by another account is refused
 * (answerCallbackQuery with the refusal) and the task stays open; the owner's press approves it and the
 * post's buttons give way to the outcome (editMessageText); a task answered in the console is edited too;
 * an ask is answered by replying to its post; "Always allow" lifts the tool's restriction; a suspend prompt is
 * resumed and a budget stop denied from their buttons.
 */
import t from 'tap';
import { channelsRig, eventually } from './helpers/channels.js';
import { pendingApproval, task } from './helpers/owner-tasks.js';
import { startFakeTelegram } from './fakes/telegram.js';

const OWNER = 4242;

t.test('telegram: approvals answered by the owner only, edited when closed elsewhere; an ask by reply', async (t) => {
  const telegram = await startFakeTelegram(t);
  const rig = await channelsRig(t, { telegram: { apiRoot: telegram.apiRoot } }, [], {
    owners: { telegram: String(OWNER) },
  });
  const { d, agentId } = rig;
  await d.request('PUT', `/agents/${agentId}/credentials/adapter:telegram:TELEGRAM_BOT_TOKEN`, {
    value: telegram.token,
  });
  await d.request('PUT', `/agents/${agentId}/adapters/telegram`, { enabled: true, policy: { dm: 'none' } });
  await rig.waitStatus('telegram', 'connected');

  const approval = await pendingApproval(rig, 'via_telegram');
  const post = await eventually('the approval posted to the owner', () =>
    telegram.sent.find((message) => message.reply_markup),
  );
  t.equal(String(post.chat_id), String(OWNER), "posted to the owner's private chat");
  t.match(post.text, /wants to run sys_set_meta/);
  t.match(post.text, /via_telegram/, 'the arguments are shown');
  const buttons = post.reply_markup!.inline_keyboard.flat();
  t.same(
    buttons.map((button) => button.text),
    ['Approve', 'Always allow sys_set_meta', 'Deny'],
  );
  for (const button of buttons) {
    t.notOk(button.callback_data.includes(approval.id), 'the button data does not carry the task id');
    t.ok(Buffer.byteLength(button.callback_data) <= 64, 'within the 64 bytes Telegram allows');
  }
  const approve = buttons[0]!.callback_data;

  // Someone else presses Approve: refused, the task stays open.
  const stranger = telegram.press(777, post.message_id, approve);
  const refused = await eventually('the refusal', () =>
    telegram.callbackAnswers.find((answer) => answer.callback_query_id === stranger),
  );
  t.match(refused.text, /Only the owner/);
  t.equal(refused.show_alert, true);
  t.equal((await task(rig, approval.id)).status, 'pending_approval', "a stranger's press leaves the task open");

  // A forged token from the owner answers nothing.
  const forged = telegram.press(OWNER, post.message_id, `${'A'.repeat(22)}:ok`);
  const notOpen = await eventually('the forged press answered', () =>
    telegram.callbackAnswers.find((answer) => answer.callback_query_id === forged),
  );
  t.match(notOpen.text, /no longer open/);
  t.equal((await task(rig, approval.id)).status, 'pending_approval');

  // The owner approves.
  const owner = telegram.press(OWNER, post.message_id, approve);
  const taken = await eventually('the approval taken', () =>
    telegram.callbackAnswers.find((answer) => answer.callback_query_id === owner),
  );
  t.equal(taken.text, 'Approved.');
  const done = await eventually('the approved call run', async () => {
    const current = await task(rig, approval.id);
    return current.status === 'completed' ? current : undefined;
  });
  t.same(done.resolution, { action: 'approve' });
  const edit = await eventually('the post edited', () =>
    telegram.edits.find((change) => change.message_id === post.message_id),
  );
  t.match(edit.text, /Approved\.$/);
  t.notOk(edit.reply_markup, 'the buttons are gone');

  // Answered in the console: the post says so.
  const second = await pendingApproval(rig, 'via_console');
  const secondPost = await eventually('the second approval posted', () =>
    telegram.sent.find((message) => message.reply_markup && message.text.includes('via_console')),
  );
  const resolved = await d.request('POST', `/agents/${agentId}/tasks/${second.id}/resolve`, { action: 'deny' });
  t.equal(resolved.status, 200);
  const secondEdit = await eventually('the second post edited', () =>
    telegram.edits.find((change) => change.message_id === secondPost.message_id),
  );
  t.match(secondEdit.text, /Denied\.$/);
  // Its button now answers nothing.
  const late = telegram.press(
    OWNER,
    secondPost.message_id,
    secondPost.reply_markup!.inline_keyboard[0]![0]!.callback_data,
  );
  t.match(
    (await eventually('the late press', () => telegram.callbackAnswers.find((a) => a.callback_query_id === late))).text,
    /no longer open/,
  );

  // An ask, answered by replying to its post.
  await d.request('POST', `/agents/${agentId}/chat`, { text: 'call ask {"question":"Which colour?"}' });
  const askPost = await eventually('the ask posted', () =>
    telegram.sent.find((message) => message.text.includes('Which colour?')),
  );
  t.match(askPost.text, /Reply to this message/);
  telegram.inject({
    chat: { id: OWNER, type: 'private' },
    from: { id: OWNER, is_bot: false, first_name: 'Owner' },
    text: 'green',
    reply_to_message: { message_id: askPost.message_id, date: 0, chat: { id: OWNER, type: 'private' }, text: '' },
  });
  const receipt = await eventually('the receipt', () =>
    telegram.sent.find((message) => message.reply_parameters?.message_id !== undefined && message.text === 'Answered.'),
  );
  t.equal(String(receipt.chat_id), String(OWNER));
  await eventually('the ask post edited', () =>
    telegram.edits.find((change) => change.message_id === askPost.message_id),
  );
  t.same(await rig.inbox(), [], 'the reply was an answer, not an inbox message');
  const asks = (await d.request('GET', `/agents/${agentId}/asks`)).body.asks;
  t.same(asks, [], 'the ask is answered');

  /** The newest post with buttons whose text matches, and a press of the button labelled `label` by the owner. */
  const pressOwner = async (what: RegExp, label: string) => {
    const found = await eventually(`the post ${what}`, () =>
      [...telegram.sent].reverse().find((message) => message.reply_markup && what.test(message.text)),
    );
    const button = found.reply_markup!.inline_keyboard.flat().find((b) => b.text === label);
    if (!button) throw new Error(`no button ${label} in ${JSON.stringify(found.reply_markup)}`);
    const id = telegram.press(OWNER, found.message_id, button.callback_data);
    return eventually(`the answer to ${label}`, () => telegram.callbackAnswers.find((a) => a.callback_query_id === id));
  };

  // Always allow: approved, and the tool is no longer restricted for this agent.
  const third = await pendingApproval(rig, 'always');
  t.equal((await pressOwner(/"always"/, 'Always allow sys_set_meta')).text, 'Approved, and always allowed.');
  await eventually('the third call run', async () => (await task(rig, third.id)).status === 'completed');
  const tools = (await d.request('GET', `/agents/${agentId}/tools`)).body.tools;
  t.equal(tools.find((tool: any) => tool.name === 'sys_set_meta').restricted, false, 'the restriction is lifted');

  // A suspend prompt, resumed.
  await d.request('POST', `/agents/${agentId}/chat`, {
    text: 'call sys_set_state {"state":"suspended","reason":"nothing left to do"}',
  });
  t.equal((await pressOwner(/asks to suspend loop main: nothing left to do/, 'Resume')).text, 'Resumed.');
  t.same((await d.request('GET', '/tasks?kind=suspend')).body.tasks, [], 'the suspend prompt is answered');

  // A budget stop: the owner is offered allow, raise and deny; deny fails the call.
  await d.request('PATCH', `/agents/${agentId}/config`, { budget: { day_tokens: 1 } });
  await d.request('POST', `/agents/${agentId}/chat`, { text: 'over budget' });
  const budget = await eventually(
    'the budget task',
    async () => (await d.request('GET', '/tasks?kind=budget')).body.tasks[0],
  );
  const budgetPost = await eventually('the budget post', () =>
    [...telegram.sent].reverse().find((message) => message.reply_markup && /over its budget/.test(message.text)),
  );
  t.same(
    budgetPost.reply_markup!.inline_keyboard.flat().map((b) => b.text),
    ['Allow this call', "Raise today's limit by 1", 'Deny'],
  );
  t.equal((await pressOwner(/over its budget/, 'Deny')).text, 'Denied.');
  t.equal((await task(rig, budget.id)).status, 'denied');
});
