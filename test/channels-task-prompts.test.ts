/**
 * How owner tasks read on a chat platform and how answers there map back (extensions/channels/task-prompts.ts,
 * adapters/task-buttons.ts): the choices per kind, a button's data (token and choice, within Telegram's 64
 * bytes, foreign data refused), a reply's words and its text without the quoted mail.
 */
import t from 'tap';
import type { OwnerTask } from '@agt/contracts';
import { parsePressData, pressData } from '../extensions/channels/adapters/task-buttons.js';
import { answerOfChoice, answerOfText, choicesOf, replyBody } from '../extensions/channels/task-prompts.js';

const base = { agentId: 'a1', agentName: 'Helper', loop: 'main', turnId: 't1', createdAt: 1 };
const approval: OwnerTask = { ...base, kind: 'approval', id: 'x', tool: 'fs_write', args: { path: 'a' } };
const budget: OwnerTask = { ...base, kind: 'budget', id: 'y', tool: 'budget', args: { limit: 2, question: 'q' } };
const ask: OwnerTask = { ...base, kind: 'ask', id: 'z', question: 'Which?', schema: { enum: ['red', 'green'] } };
const suspend: OwnerTask = { ...base, kind: 'suspend', id: 's', reason: 'done' };

t.test('choices and button data', async (t) => {
  t.same(
    choicesOf(approval).map((c) => c.id),
    ['ok', 'always', 'no'],
  );
  t.same(
    choicesOf(budget).map((c) => c.label),
    ['Allow this call', "Raise today's limit by 2", 'Deny'],
  );
  t.same(
    choicesOf(ask).map((c) => c.label),
    ['red', 'green'],
  );
  t.same(choicesOf({ ...ask, schema: { type: 'string' } }), [], 'free text only: no buttons');
  t.same(
    choicesOf(suspend).map((c) => c.id),
    ['resume', 'stay'],
  );
  const token = 'AbCdEfGhIjKlMnOpQrStUv';
  for (const choice of choicesOf(approval)) {
    const data = pressData(token, choice.id);
    t.ok(Buffer.byteLength(data) <= 64);
    t.same(parsePressData(data), { token, choice: choice.id });
  }
  t.equal(parsePressData('x:ok'), undefined, 'a short token is not ours');
  t.equal(parsePressData(`${token}:ok:extra`), undefined);
  t.equal(parsePressData(undefined), undefined);
});

t.test('answers from buttons and replies', async (t) => {
  t.same(answerOfChoice(approval, 'always'), { kind: 'approval', action: 'approve', always: true });
  t.equal(answerOfChoice(approval, 'resume'), undefined, "another kind's choice answers nothing");
  t.same(answerOfChoice(budget, 'raise'), { kind: 'budget', action: 'approve', amount: 2 });
  t.same(answerOfChoice(ask, 'o1'), { kind: 'ask', answer: 'green' });
  t.equal(answerOfChoice(ask, 'o7'), undefined);
  t.same(answerOfText(approval, 'Deny, please'), { kind: 'approval', action: 'deny', reason: 'denied by the owner' });
  t.equal(answerOfText(approval, 'maybe later'), undefined);
  t.same(answerOfText(budget, '5 more'), { kind: 'budget', action: 'approve', amount: 5 });
  t.same(answerOfText(ask, '  a free answer  '), { kind: 'ask', answer: 'a free answer' });
  t.same(answerOfText(suspend, 'stay'), { kind: 'suspend', resume: false });
});

t.test('a reply without what it quotes', async (t) => {
  const mail = (text: string) => ({
    messageId: 'm',
    chatId: 'c',
    chatKind: 'dm' as const,
    sender: { id: 'o' },
    mentioned: true,
    text,
    attachments: [],
    extra: { subject: 'Re: [agt] x ' },
  });
  t.equal(replyBody(mail('Subject: Re: [agt] x\n\napprove\n\nOn Sun, Bob wrote:\n> deny')), 'approve');
  t.equal(replyBody(mail('yes\n> quoted')), 'yes');
  t.equal(replyBody({ ...mail('two\nlines'), extra: {} }), 'two\nlines');
});
