/** Shapes shared by the runtime's parts (executor, turn runner, tools, routes). */
import type { AgentConfig } from '@agt/contracts';
import type { AgentFile } from '../agents/agent-file.js';
import type { TriggerEvent } from './dispatch.js';

/** Executor states of one loop (docs/runtime.md#a-turn). */
export const EXECUTOR_STATES = [
  'idle',
  'thinking',
  'tool_use',
  'awaiting_approval',
  'awaiting_ask',
  'suspended',
  'error',
  'stopped',
] as const;
export type ExecutorState = (typeof EXECUTOR_STATES)[number];

export const DISPLAY_STATES = ['active', 'idle', 'hibernate', 'suspended', 'off'] as const;
export type DisplayState = (typeof DISPLAY_STATES)[number];

/**
 * What the runtime needs of a loaded agent. The registry's loaded agent satisfies it; `config` is read
 * at every use so a replaced config applies to the next step.
 */
export interface RuntimeAgent {
  readonly id: string;
  readonly name: string;
  readonly file: AgentFile;
  /** The config that applies (the file's, under the owner's ceiling). */
  readonly config: AgentConfig;
  /** The config as the file holds it: what the agent's own config changes start from. */
  readonly fileConfig?: AgentConfig;
  /** The owner's current settings (config unlocks). */
  ownerSettings?(): Readonly<import('@agt/contracts').Settings>;
  /** The display state the registry shows when no runtime answers; kept in step by the runtime. */
  displayState?: string;
}

/** Fields of one `agt_logs` row written by the runtime or one of its parts. */
export interface LogFields {
  origin?: string;
  event?: string;
  target?: string;
  data?: unknown;
  loop?: string;
  turnId?: string;
  /** Written by a system-scope run: offered to `on_logs` as such, so it never re-triggers. */
  system?: boolean;
}

/**
 * A unit of work waiting in a loop's queue. `resume` continues a turn the daemon stopped while it waited
 * for the owner (restart recovery): it runs first, writes no incoming row and picks up the turn's
 * unanswered tool calls; `absorbed` are the chats that turn had absorbed (they end with it).
 */
export type QueueItem =
  | { kind: 'chat'; turnId: string; text: string; at: number }
  | { kind: 'trigger'; turnId: string; trigger: string; events: TriggerEvent[]; count: number; at: number }
  | { kind: 'resume'; turnId: string; trigger: string; absorbed: string[]; at: number };

/** How a turn ended; the executor turns it into exactly one `turn.completed` or `agent.error`. */
export type TurnOutcome =
  | { kind: 'completed'; text: string | null; llmCalls: number; toolCalls: number; stopReason: string }
  | { kind: 'error'; code: string; message: string; status?: number; llmCalls: number; toolCalls: number };

/**
 * Why a running turn's AbortController fired. `park`: the daemon shuts down while the turn waits for the
 * owner; the turn ends without an event and resumes when the agent loads again.
 */
export type StopCause = 'interrupt' | 'abort' | 'unload' | 'disabled' | 'off' | 'timeout' | 'cleared' | 'park';

/** Defaults of the `limits` object of the agent config (owned by agents/, beside the owner's ceiling). */
export { DEFAULT_LIMITS } from '../agents/limit-defaults.js';

/**
 * Queued turns one loop holds at most. Beyond it a chat or a dispatch is refused with 409 `conflict`,
 * and trigger or timer work is dropped with a warning in the agent's log.
 */
export const MAX_QUEUED_TURNS = 1_000;

/** History rows handed to the model per call (older rows are left to compaction). */
export const MAX_CONTEXT_ROWS = 400;

/** A numeric `limits` field of the config, or `fallback` when unset or not a positive number. */
export function limitOf(config: AgentConfig, key: string, fallback: number): number;
export function limitOf(config: AgentConfig, key: string, fallback?: undefined): number | undefined;
export function limitOf(config: AgentConfig, key: string, fallback?: number): number | undefined {
  const value = (config.limits as Record<string, unknown> | undefined)?.[key];
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}
