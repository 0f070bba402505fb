/**
 * The operator's words for the daemon's terms (states, kinds, field names), and `Term`: the word shown,
 * the raw value one click away (a button that swaps the word for the raw value and back).
 */
import { useState } from 'preact/hooks';

/** Agent states (executor and display states) as an operator says them, with the badge tone. */
const STATES: Record<string, [string, Tone]> = {
  idle: ['Idle', 'ok'],
  active: ['Active', 'ok'],
  thinking: ['Thinking', 'busy'],
  tool_use: ['Using a tool', 'busy'],
  awaiting_approval: ['Needs approval', 'wait'],
  awaiting_ask: ['Waiting for an answer', 'wait'],
  suspended: ['Suspended', 'wait'],
  error: ['Error', 'error'],
  stopped: ['Stopped', 'off'],
  hibernate: ['Asleep', 'off'],
  off: ['Off', 'off'],
};
export type Tone = 'ok' | 'busy' | 'wait' | 'error' | 'off' | 'info';

export const stateWord = (state: string): [string, Tone] => STATES[state] ?? [state.replace(/_/g, ' '), 'info'];

/** Field names of daemon answers that the console shows, in words. */
const FIELDS: Record<string, string> = {
  ownerDid: 'Owner ID',
  runtimeDid: 'Daemon ID',
  storage: 'Key stored in',
  backupConfirmed: 'Recovery phrase backed up',
  passphraseRequired: 'Passphrase needed to unlock',
  runtimeState: 'State',
  displayState: 'Activity',
  createdAt: 'Created',
  updatedAt: 'Changed',
  lastUsedAt: 'Last used',
  expiresAt: 'Expires',
  created_at: 'When',
  baseUrl: 'Address',
  apiKeyEnv: 'Key variable',
  defaultModel: 'Default model',
  filePath: 'File',
  agentId: 'Agent',
  cost_usd: 'Cost (USD)',
};
export const fieldWord = (key: string) =>
  FIELDS[key] ??
  key
    .replace(/_/g, ' ')
    .replace(/([a-z])([A-Z])/g, (_, a: string, b: string) => `${a} ${b.toLowerCase()}`)
    .replace(/^./, (c) => c.toUpperCase());

const KINDS: Record<string, string> = {
  approval: 'Approval',
  budget: 'Budget limit',
  ask: 'Question',
  suspend: 'Suspended',
};
export const kindWord = (kind: string) => KINDS[kind] ?? kind;

const IDENTITY: Record<string, [string, Tone]> = {
  ready: ['Unlocked', 'ok'],
  locked: ['Locked', 'wait'],
  none: ['No identity yet', 'off'],
  'restore-needed': ['Needs restore', 'error'],
};
export const identityWord = (state: string): [string, Tone] => IDENTITY[state] ?? [state, 'info'];

/** A word with its raw value one click away. */
export function Term({ word, raw, tone }: { word: string; raw: string; tone?: Tone }) {
  const [showRaw, setShowRaw] = useState(false);
  return (
    <button
      type="button"
      class={`term${tone ? ` badge tone-${tone}` : ''}`}
      aria-pressed={showRaw}
      title={showRaw ? 'Show in words' : `Raw value: ${raw}`}
      onClick={() => setShowRaw(!showRaw)}
    >
      {showRaw ? <code>{raw}</code> : word}
    </button>
  );
}

export function StateBadge({ state }: { state: string }) {
  const [word, tone] = stateWord(state);
  return <Term word={word} raw={state} tone={tone} />;
}

/** "3 min ago", "in 2 h", from epoch ms. */
export function relative(ms: number, now = Date.now()): string {
  const s = Math.round((now - ms) / 1000);
  const abs = Math.abs(s);
  const [n, unit] =
    abs < 45
      ? [0, '']
      : abs < 3600
        ? [Math.round(abs / 60), 'min']
        : abs < 86_400
          ? [Math.round(abs / 3600), 'h']
          : [Math.round(abs / 86_400), 'd'];
  if (!unit) return s >= 0 ? 'just now' : 'in a moment';
  return s >= 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`;
}

export const money = (usd: number | null | undefined) =>
  typeof usd === 'number' ? (usd < 0.01 && usd > 0 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`) : '—';
export const count = (n: number) =>
  n >= 1e6
    ? `${(n / 1e6).toFixed(1)}M`
    : n >= 1e4
      ? `${Math.round(n / 1e3)}k`
      : n >= 1e3
        ? `${(n / 1e3).toFixed(1)}k`
        : String(n);
