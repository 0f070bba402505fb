/**
 * The shared shape of owner-task buttons on chat platforms: a button's data is `<token>:<choice id>` (at
 * most 31 bytes: Telegram allows 64, Slack and Discord more), and the text above the buttons says when a
 * reply is an answer too.
 */
import type { TaskPress, TaskPrompt } from '../adapter.js';

const PRESS = /^([A-Za-z0-9_-]{16,64}):([a-z0-9]{1,8})$/;

export const pressData = (token: string, choice: string) => `${token}:${choice}`;

/** A button's data back as token and choice; undefined for data that is not ours. */
export function parsePressData(data: string | undefined): Omit<TaskPress, 'from'> | undefined {
  const match = data === undefined ? null : PRESS.exec(data);
  return match ? { token: match[1]!, choice: match[2]! } : undefined;
}

/** The prompt's text, with the hint for a reply when a reply is an answer. */
export function promptLines(prompt: TaskPrompt): string {
  const hint =
    prompt.kind === 'ask'
      ? 'Reply to this message with your answer.'
      : prompt.acceptsText
        ? 'Or reply to this message with the amount to raise the limit by.'
        : '';
  return hint ? `${prompt.text}\n\n${hint}` : prompt.text;
}
