/**
 * Owner tasks on Telegram against the fake Bot API: an approval is posted to the owner's private chat with
 * inline buttons whose data is an opaque token (never the task id); a press by another account is refused
 * (answerCallbackQuery with the refusal) and the task stays open; the owner's press approves it and the
 * post's buttons give way to the outcome (editMessageText); a task answered in the console is edited too;
 * an ask is answered by replying to its post.
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
});
