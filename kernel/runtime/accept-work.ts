/**
 * The accept path of one agent: a chat or a dispatched trigger is committed to the agent file (with its
 * `Idempotency-Key`) before the call returns, then queued in its loop; a system-scope dispatch starts at
 * once. A 404/409 is thrown before anything is written, so a refused request leaves no trace. `POST chat`
 * takes {@link acceptChatGrouped}: its commit is shared with the other chats of the same event-loop turn
 * (kernel/agents/group-commit.ts) and it resolves once that committed.
 */
import { randomUUID } from 'node:crypto';
import { isAgtError, type TriggerType } from '@agt/contracts';
import type { AgentFile } from '../agents/agent-file.js';
import { GroupCommit } from '../agents/group-commit.js';
import type { QueuedInput } from '../agents/stores/queue-store.js';
import { requestDigest, type Idempotency } from '../agents/stores/idempotency-store.js';
import type { Clock } from './clock.js';
import { TRIGGER_OF, type NormalizedDispatch, type TriggerEvent } from './dispatch.js';
import { agentNotRunning, idempotencyKeyReused } from './errors.js';
import type { LoopExecutor } from './executor/loop-executor.js';
import type { TriggerOrigin } from './triggers/evaluator.js';
import type { SystemTarget } from './triggers/system-runner.js';
import type { QueueItem, RuntimeAgent } from './types.js';

/** What accepting work needs of the agent's runtime (AgentRuntime gives it). */
export interface AcceptHost {
  readonly agent: RuntimeAgent;
  readonly clock: Clock;
  /** The executor of a declared loop; 404 unknown, 409 disabled. */
  loop(name: string): LoopExecutor;
  fire(type: TriggerType, data: unknown, origin?: TriggerOrigin): number;
  /** Starts a system-scope run now (SystemRunner.start). */
  runSystem(target: SystemTarget, trigger: string, events: TriggerEvent[], count: number, turnId: string): void;
  /** The chats waiting for their shared commit ({@link acceptChatGrouped}). */
  readonly batch: ChatBatch;
  /** True once the runtime is unloaded. */
  detached(): boolean;
}

/** One agent's chats waiting for their shared commit, and their idempotency keys. */
export interface ChatBatch {
  readonly commits: GroupCommit;
  /** Keys of accepts not committed yet, so a repeat in the same batch is answered as a key seen before. */
  readonly keys: Map<string, { turnId: string; requestHash: string; committed: Promise<void> }>;
}

export function chatBatch(file: () => AgentFile): ChatBatch {
  return { commits: new GroupCommit(file), keys: new Map() };
}

/**
 * Queues a chat (404/409 before anything is written); returns its turn id. The accepted chat (and its
 * `Idempotency-Key`) is committed to the agent file before this returns, so the 202 that follows is
 * never lost by a crash. A key seen before (24 h) with the same loop and text returns its first turn id
 * and queues nothing; with another request it is refused (422 `idempotency_key_reused`).
 */
export function acceptChat(
  host: AcceptHost,
  loopName: string,
  text: string,
  idempotencyKey?: string,
  accepted?: (turnId: string) => void,
): string {
  const now = host.clock.now();
  const idempotency =
    idempotencyKey === undefined
      ? undefined
      : { key: idempotencyKey, requestHash: requestDigest('chat', loopName, text) };
  const seen = replayOf(host, idempotency, now);
  if (seen !== undefined) return seen;
  const executor = host.loop(loopName);
  executor.assertAccepts();
  const turnId = randomUUID();
  accept(
    host,
    executor,
    { kind: 'chat', turnId, text, at: now },
    { turnId, loop: loopName, kind: 'chat', payload: { text }, createdAt: now },
    idempotency,
    accepted,
  );
  host.fire('on_chat', { text, loop: loopName, turn_id: turnId }, { loop: loopName });
  return turnId;
}

/**
 * {@link acceptChat} for a caller that can wait (`POST chat`): the accepted chat shares one commit with the
 * other chats of this agent accepted in the same event-loop turn, is queued once that committed, and
 * resolves with its turn id then; the 202 that follows is never lost by a crash, as with its own commit.
 */
export async function acceptChatGrouped(
  host: AcceptHost,
  loopName: string,
  text: string,
  idempotencyKey?: string,
): Promise<string> {
  const now = host.clock.now();
  const idempotency =
    idempotencyKey === undefined
      ? undefined
      : { key: idempotencyKey, requestHash: requestDigest('chat', loopName, text) };
  const batched = idempotency && host.batch.keys.get(idempotency.key);
  if (batched) {
    if (batched.requestHash !== idempotency.requestHash) throw idempotencyKeyReused();
    await batched.committed;
    return batched.turnId;
  }
  const seen = replayOf(host, idempotency, now);
  if (seen !== undefined) return seen;
  const executor = host.loop(loopName);
  executor.assertAccepts();
  // A chat turn of this loop still absorbing waits for this one (kernel/runtime/executor/turn.ts).
  executor.noteArrival();
  const turnId = randomUUID();
  const row: QueuedInput = { turnId, loop: loopName, kind: 'chat', payload: { text }, createdAt: now };
  // Queued as soon as the batch committed (so a burst joins one turn); the answer may wait a slice.
  const committed = host.batch.commits.add(
    () => writeAccepted(host, row, idempotency),
    () => {
      enqueueAccepted(host, executor, { kind: 'chat', turnId, text, at: now }, idempotency);
      host.fire('on_chat', { text, loop: loopName, turn_id: turnId }, { loop: loopName });
    },
  );
  if (idempotency) host.batch.keys.set(idempotency.key, { turnId, requestHash: idempotency.requestHash, committed });
  try {
    await committed;
  } catch (error) {
    // Unloaded while the batch waited (its file closed): refused as for an agent not running.
    throw host.detached() && !isAgtError(error) ? agentNotRunning(host.agent.name) : error;
  } finally {
    if (idempotency) host.batch.keys.delete(idempotency.key);
  }
  return turnId;
}

/**
 * `POST trigger`: bypasses the evaluator; returns the turn id that the work will carry. Committed like
 * a chat before it returns (a system-scope run as `running`: it starts at once and is never re-run).
 * `accepted`: called with the new turn's id once it is committed, before it can start (not for a
 * replay). A repeated key answers as for a chat; its request is compared only when `requestHash` is given.
 */
export function acceptDispatch(
  host: AcceptHost,
  dispatch: NormalizedDispatch,
  idempotency?: Idempotency,
  accepted?: (turnId: string) => void,
): string {
  const now = host.clock.now();
  const seen = replayOf(host, idempotency, now);
  if (seen !== undefined) return seen;
  const turnId = randomUUID();
  const types = new Set(dispatch.events.map((e) => e.type));
  const trigger = types.size === 1 ? TRIGGER_OF[dispatch.events[0]!.type] : 'dispatch';
  if (dispatch.target.scope === 'system') {
    commitAccepted(
      host,
      {
        turnId,
        loop: 'main',
        kind: 'system',
        status: 'running',
        payload: { trigger, target: dispatch.target, count: dispatch.count },
        createdAt: now,
      },
      idempotency,
    );
    accepted?.(turnId);
    host.runSystem(dispatch.target, trigger, dispatch.events, dispatch.count, turnId);
    return turnId;
  }
  const loop = dispatch.target.loop ?? 'main';
  const executor = host.loop(loop);
  executor.assertAccepts();
  const item: QueueItem = {
    kind: 'trigger',
    turnId,
    trigger,
    events: dispatch.events,
    count: dispatch.count,
    at: now,
  };
  accept(
    host,
    executor,
    item,
    {
      turnId,
      loop,
      kind: 'trigger',
      payload: { trigger, events: dispatch.events, count: dispatch.count },
      createdAt: now,
    },
    idempotency,
    accepted,
  );
  return turnId;
}

/**
 * The turn id a repeated key answers, or undefined for a key not seen (24 h). A key first used with
 * another request (both digests known and different) is refused.
 */
function replayOf(host: AcceptHost, idempotency: Idempotency | undefined, now: number): string | undefined {
  if (idempotency === undefined) return undefined;
  const seen = host.agent.file.idempotency.get(idempotency.key, now);
  if (seen === undefined) return undefined;
  if (
    seen.requestHash !== null &&
    idempotency.requestHash !== undefined &&
    seen.requestHash !== idempotency.requestHash
  )
    throw idempotencyKeyReused();
  return seen.turnId;
}

/** Commits an accepted turn and its idempotency key in one transaction. */
function commitAccepted(host: AcceptHost, row: QueuedInput, idempotency: Idempotency | undefined): void {
  host.agent.file.transaction(() => writeAccepted(host, row, idempotency));
}

/** Writes an accepted turn and its idempotency key (inside a transaction). */
function writeAccepted(host: AcceptHost, row: QueuedInput, idempotency: Idempotency | undefined): void {
  const file = host.agent.file;
  file.queue.insert(row);
  if (idempotency !== undefined)
    file.idempotency.put(
      idempotency.key,
      row.turnId,
      row.createdAt ?? host.clock.now(),
      idempotency.requestHash ?? null,
    );
}

/** Commits, then queues; a refusal after the commit (not expected: checked before) takes the commit back. */
function accept(
  host: AcceptHost,
  executor: LoopExecutor,
  item: QueueItem,
  row: QueuedInput,
  idempotency: Idempotency | undefined,
  accepted?: (turnId: string) => void,
): void {
  commitAccepted(host, row, idempotency);
  accepted?.(item.turnId);
  enqueueAccepted(host, executor, item, idempotency);
}

/** Queues committed work; a refusal (a loop stopped or full meanwhile) takes the commit back. */
function enqueueAccepted(
  host: AcceptHost,
  executor: LoopExecutor,
  item: QueueItem,
  idempotency: Idempotency | undefined,
): void {
  try {
    executor.enqueue(item);
  } catch (error) {
    const file = host.agent.file;
    file.transaction(() => {
      file.queue.remove([item.turnId]);
      if (idempotency !== undefined) file.idempotency.delete(idempotency.key);
    });
    throw error;
  }
}
