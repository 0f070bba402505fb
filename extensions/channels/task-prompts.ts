/**
 * What an owner task looks like on a chat platform and how an answer there maps back: the prompt's text and
 * buttons per kind, a button's choice or a reply's text turned into an {@link OwnerTaskAnswer}, and the
 * line that replaces the buttons once the task is closed.
 */
import type { OwnerTask, OwnerTaskAnswer } from '@agt/contracts';
import type { AdapterInbound } from './adapter.js';

/** Arguments shown in a prompt at most (the console shows them whole). */
const MAX_ARGS_CHARS = 1500;
/** An ask's enum offered as buttons when it has at most this many values. */
const MAX_OPTION_BUTTONS = 8;
const MAX_LABEL = 60;

export interface Choice {
  id: string;
  label: string;
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function argsText(args: Record<string, unknown> | undefined): string {
  return clip(JSON.stringify(args ?? {}, null, 2), MAX_ARGS_CHARS);
}

/** The values of an ask's answer schema that can be buttons: an enum of strings, or a boolean. */
function askOptions(schema: Record<string, unknown> | undefined): string[] {
  if (!schema) return [];
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.filter((value): value is string => typeof value === 'string');
    return values.length <= MAX_OPTION_BUTTONS ? values : [];
  }
  return schema.type === 'boolean' ? ['true', 'false'] : [];
}

const budgetRaise = (task: OwnerTask) => {
  const limit = task.args?.limit;
  return typeof limit === 'number' && limit > 0 ? limit : undefined;
};

export function promptText(task: OwnerTask): string {
  const who = `Agent ${task.agentName}`;
  switch (task.kind) {
    case 'approval':
      return `${who} wants to run ${task.tool} (loop ${task.loop}):\n${argsText(task.args)}`;
    case 'budget':
      return `${who} is over its budget: ${String(task.args?.question ?? '')}`;
    case 'ask':
      return `${who} asks: ${task.question ?? ''}`;
    case 'suspend':
      return `${who} asks to suspend loop ${task.loop}: ${task.reason ?? ''}`;
  }
}

export function choicesOf(task: OwnerTask): Choice[] {
  switch (task.kind) {
    case 'approval':
      return [
        { id: 'ok', label: 'Approve' },
        { id: 'always', label: clip(`Always allow ${task.tool}`, MAX_LABEL) },
        { id: 'no', label: 'Deny' },
      ];
    case 'budget': {
      const raise = budgetRaise(task);
      return [
        { id: 'ok', label: 'Allow this call' },
        ...(raise !== undefined ? [{ id: 'raise', label: `Raise today's limit by ${raise}` }] : []),
        { id: 'no', label: 'Deny' },
      ];
    }
    case 'ask':
      return askOptions(task.schema).map((value, index) => ({ id: `o${index}`, label: clip(value, MAX_LABEL) }));
    case 'suspend':
      return [
        { id: 'resume', label: 'Resume' },
        { id: 'stay', label: 'Stay suspended' },
      ];
  }
}

/** A pressed button's answer; undefined for a choice the task does not offer. */
export function answerOfChoice(task: OwnerTask, choice: string): OwnerTaskAnswer | undefined {
  switch (task.kind) {
    case 'approval':
      if (choice === 'ok') return { kind: 'approval', action: 'approve' };
      if (choice === 'always') return { kind: 'approval', action: 'approve', always: true };
      return choice === 'no' ? { kind: 'approval', action: 'deny', reason: 'denied by the owner' } : undefined;
    case 'budget': {
      if (choice === 'ok') return { kind: 'budget', action: 'approve' };
      const raise = budgetRaise(task);
      if (choice === 'raise' && raise !== undefined) return { kind: 'budget', action: 'approve', amount: raise };
      return choice === 'no' ? { kind: 'budget', action: 'deny', reason: 'denied by the owner' } : undefined;
    }
    case 'ask': {
      const value = /^o(\d+)$/.test(choice) ? askOptions(task.schema)[Number(choice.slice(1))] : undefined;
      return value === undefined ? undefined : { kind: 'ask', answer: value };
    }
    case 'suspend':
      if (choice === 'resume') return { kind: 'suspend', resume: true };
      return choice === 'stay' ? { kind: 'suspend', resume: false } : undefined;
  }
}

/**
 * A reply's answer: an ask takes the text as it is; the others read its first word (approve / always /
 * deny, a number raising a budget by that much, resume / stay). Undefined when the text says none of them.
 */
export function answerOfText(task: OwnerTask, text: string): OwnerTaskAnswer | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  if (task.kind === 'ask') return { kind: 'ask', answer: trimmed };
  const word = (/^[\p{L}\d.]+/u.exec(trimmed)?.[0] ?? '').toLowerCase();
  if (task.kind === 'budget' && /^\d+(\.\d+)?$/.test(word) && Number(word) > 0)
    return { kind: 'budget', action: 'approve', amount: Number(word) };
  const words: Record<string, string> = {
    approve: 'ok',
    allow: 'ok',
    yes: 'ok',
    ok: 'ok',
    always: 'always',
    deny: 'no',
    no: 'no',
    resume: 'resume',
    stay: 'stay',
  };
  const choice = words[word];
  return choice === undefined ? undefined : answerOfChoice(task, choice);
}

/** What a reply may say, for the refusal of one that says nothing we read. */
export function replyHint(task: OwnerTask): string {
  switch (task.kind) {
    case 'approval':
      return 'reply approve, always or deny';
    case 'budget':
      return 'reply allow, deny, or the amount to raise the limit by';
    case 'ask':
      return 'reply with your answer';
    case 'suspend':
      return 'reply resume or stay';
  }
}

/** The line that replaces the buttons once the task is closed (`hil.resolved`'s resolution). */
export function outcomeText(resolution: string): string {
  const words: Record<string, string> = {
    approved: 'Approved.',
    denied: 'Denied.',
    answered: 'Answered.',
    answered_by_caller: 'Answered by the caller.',
    resumed: 'Resumed.',
    declined: 'Kept suspended.',
    cancelled: 'Withdrawn: the turn ended.',
    superseded: 'Replaced: the question changed after a restart (see the new one).',
  };
  return words[resolution] ?? `Closed (${resolution}).`;
}

/** What the owner is told right after their answer was taken. */
export function takenText(answer: OwnerTaskAnswer): string {
  switch (answer.kind) {
    case 'approval':
      return answer.action === 'deny' ? 'Denied.' : answer.always ? 'Approved, and always allowed.' : 'Approved.';
    case 'budget':
      return answer.action === 'deny'
        ? 'Denied.'
        : answer.amount !== undefined
          ? `Allowed; today's limit raised by ${answer.amount}.`
          : 'Allowed.';
    case 'ask':
      return 'Answered.';
    case 'suspend':
      return answer.resume ? 'Resumed.' : 'Kept suspended.';
  }
}

/**
 * What a reply says, without what it quotes: the text before the first quoted line (`>`) or a mail
 * client's "On … wrote:", and without the `Subject:` line the email adapter puts first.
 */
export function replyBody(message: AdapterInbound): string {
  let text = message.text;
  const subject = message.extra?.subject;
  if (typeof subject === 'string' && text.startsWith(`Subject: ${subject.trim()}`))
    text = text.slice(`Subject: ${subject.trim()}`.length);
  const lines: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith('>') || /^On .+ wrote:\s*$/.test(line)) break;
    lines.push(line);
  }
  return lines.join('\n').trim();
}
