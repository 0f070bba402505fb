/**
 * `ctx.agents.tasks`: what waits for the owner (approvals of restricted tool calls, budget stops, asks,
 * suspend prompts), for an extension that carries them to the owner elsewhere (a chat app, a pager) and
 * brings the owner's answer back. The same store and checks as the Tasks routes (`GET /tasks`,
 * `POST /agents/{id}/tasks/{taskId}/resolve`, `/asks/{id}/respond`, `/suspend/respond`): an answer given
 * here or there is one answer, and the other side sees the task closed.
 *
 * These calls act with the owner's authority: an extension must make sure the person answering is the
 * owner (the `channels` extension answers only for the owner's own account on each platform).
 */

/**
 * What an owner task is: `approval` (a restricted tool call), `budget` (a model call over a budget,
 * docs/costs.md), `ask` (the `ask` tool), `suspend` (the agent asked to suspend a loop).
 *
 * @beta
 */
export type OwnerTaskKind = 'approval' | 'budget' | 'ask' | 'suspend';

/**
 * One task waiting for the owner, as `GET /tasks` lists it.
 *
 * @beta
 */
export interface OwnerTask {
  kind: OwnerTaskKind;
  /** The task id (approval, budget) or request id (ask, suspend). */
  id: string;
  agentId: string;
  agentName: string;
  loop: string;
  turnId: string | null;
  createdAt: number;
  /** approval and budget: the tool (`budget` for a budget stop) and its arguments (a budget's figures). */
  tool?: string;
  args?: Record<string, unknown>;
  /** ask: the question, and the JSON Schema of the answer when the asker gave one. */
  question?: string;
  schema?: Record<string, unknown>;
  /** suspend: why the agent wants to suspend. */
  reason?: string;
}

/**
 * The owner's answer to one task; its `kind` must be the task's.
 *
 * - approval: `approve` or `deny` (`reason` handed to the model); `always: true` with approve also lifts
 *   the tool's restriction for that agent, as `PUT /agents/{id}/tools/{name}` `{restricted: false}`.
 * - budget: `approve` allows the call (today's limit raised by `amount`, by default what the call needs),
 *   `deny` fails it.
 * - ask: the answer text. suspend: `resume` true resumes the loop, false keeps it suspended.
 *
 * @beta
 */
export type OwnerTaskAnswer =
  | { kind: 'approval'; action: 'approve' | 'deny'; reason?: string; always?: boolean }
  | { kind: 'budget'; action: 'approve' | 'deny'; amount?: number; reason?: string }
  | { kind: 'ask'; answer: string }
  | { kind: 'suspend'; resume: boolean };

/**
 * A change of the tasks waiting for the owner. `requested` may come again for a task already announced
 * (its turn resumed after a restart: same id). `closed`: answered (here or anywhere else), or cancelled
 * because its turn ended, or replaced by a new task (its call resumed after a restart and asked a different
 * question); `resolution` is the store's word for it (`approved`, `denied`, `answered`, `resumed`,
 * `declined`, `cancelled`, `superseded`).
 *
 * @beta
 */
export type OwnerTaskChange =
  | { type: 'requested'; task: OwnerTask }
  | { type: 'closed'; agentId: string; kind: OwnerTaskKind; id: string; resolution: string };

/** @beta */
export interface OwnerTasksAccess {
  /** The tasks of a loaded agent waiting for the owner, oldest first. Throws `not_found` for an agent not loaded. */
  pending(agentId: string): OwnerTask[];
  /**
   * Answers one task as its owner; the waiting turn resumes. Throws `not_found` (agent not loaded, unknown
   * task, or a task of another kind than `answer.kind`) and `conflict` (no longer pending: answered elsewhere).
   */
  answer(agentId: string, id: string, answer: OwnerTaskAnswer): Promise<void>;
  /**
   * Calls `listener` for every task announced and closed on any loaded agent, after it is committed;
   * returns the unsubscribe function. The listener must not throw or block (do slow work later).
   */
  onChange(listener: (change: OwnerTaskChange) => void): () => void;
}
