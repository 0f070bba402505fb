/**
 * Restart recovery: run once when an agent loads, right after `agent.loaded`. The agent file holds every
 * accepted turn that had not ended (`agt_queue`) and every request to the owner (`agt_tasks`,
 * `agt_prompts`); after a clean unload there is nothing to do. After a crash (or a shutdown that kept
 * work for the next start):
 *
 * - an end that was committed but never reached the event streams (a kill between the two) is emitted
 *   again first, unchanged (the same event type, payload and turn ids): it is on the stream and in the
 *   replay of this run, exactly once. A kill can also fall between the socket write and the row's
 *   delete: the end was recorded with where it went out (epoch and cursor), so a stream resuming from
 *   that run at or past it (`?since=&epoch=`) is not given the repeat (events/sse-batches.ts);
 * - a turn that waited for the owner (a pending approval, ask or suspend prompt, or a decision given
 *   but not yet picked up) is **resumed**: a `resume` item runs first in its loop, takes its request up
 *   again (announced once more with `hil.requested`, same id) and goes on from the call that waited;
 * - any other turn that was mid-flight **ends**: its unanswered tool calls get error results the model
 *   reads ("the daemon stopped ..."), a notice row says the turn was cut short, and `agent.error` with
 *   `code: "daemon_restart"` ends its turn id and the chats it had absorbed; an approved tool that was
 *   running is never run again (its task becomes `failed`);
 * - queued turns are **queued again** in their original order (chats before trigger turns, as always),
 *   without interrupting anything; work for a loop that no longer exists or is disabled is announced
 *   with `chat.discarded` (`reason: "daemon_restart"`).
 *
 * Rows are committed before the events that announce them; `agt_queue` rows go once their end is
 * announced (see AgentRuntime.emit).
 */
import type { EventPayloads, EventType } from '@agt/contracts';
import type { QueuedTurn } from '../agents/stores/queue-store.js';
import type { TriggerEvent } from './dispatch.js';
import { unansweredCalls } from './executor/context.js';
import type { LoopExecutor } from './executor/loop-executor.js';
import type { HilStore } from './hil.js';
import type { LogFields, QueueItem, RuntimeAgent } from './types.js';

/** `agent.error` code of a turn the daemon stopped in the middle of. */
export const RESTART_ERROR_CODE = 'daemon_restart';

export interface RecoveryHost {
  readonly agent: RuntimeAgent;
  readonly hil: HilStore;
  loopAvailable(name: string): boolean;
  loop(name: string): LoopExecutor;
  /** `sentAt`: where the event went out in earlier runs (a repeated end; see FrameOrigin in events/bus.ts). */
  emit<T extends EventType>(
    type: T,
    payload: EventPayloads[T],
    options?: { loop?: string; turnId?: string; sentAt?: ReadonlyArray<{ epoch: string; cursor: number }> },
  ): void;
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: LogFields): void;
}

export interface RecoverySummary {
  /** Turn ids whose committed end is emitted again (it had not reached the streams). */
  redelivered: string[];
  /** Queued turns put back in their loops. */
  requeued: string[];
  /** Turns that waited for the owner and run on from there. */
  resumed: string[];
  /** Turn ids ended with `agent.error` `daemon_restart` (absorbed chats included). */
  ended: string[];
  /** Queued turn ids announced with `chat.discarded` (their loop is gone or disabled). */
  discarded: string[];
}

const NOT_RUN = 'Not run: the daemon stopped while this call waited for the owner, and the turn ended.';
const UNKNOWN =
  'No result: the daemon stopped while this call ran; whether it finished is unknown. It was not run again.';

/** The queue item of a `queued` row; undefined for a row this build cannot read back. */
function queuedItem(row: QueuedTurn): QueueItem | undefined {
  const payload = row.payload;
  if (row.kind === 'chat' && typeof payload.text === 'string')
    return { kind: 'chat', turnId: row.turn_id, text: payload.text, at: row.created_at };
  if (row.kind === 'trigger' && typeof payload.trigger === 'string' && Array.isArray(payload.events)) {
    const count = typeof payload.count === 'number' ? payload.count : payload.events.length;
    return {
      kind: 'trigger',
      turnId: row.turn_id,
      trigger: payload.trigger,
      events: payload.events as TriggerEvent[],
      count,
      at: row.created_at,
    };
  }
  return undefined;
}

export function recoverAcceptedWork(host: RecoveryHost): RecoverySummary {
  const file = host.agent.file;
  const summary: RecoverySummary = { redelivered: [], requeued: [], resumed: [], ended: [], discarded: [] };
  const interrupted = host.hil.failInterrupted(
    'the daemon stopped while this approved tool ran; whether it finished is unknown, so it was not run again',
  );
  const all = file.queue.list();
  // Ends already decided go out first, once per event (one event may end several turn ids).
  const redelivered = new Set<string>();
  for (const row of all) {
    if (!row.ended) continue;
    summary.redelivered.push(row.turn_id);
    const key = JSON.stringify(row.ended);
    if (redelivered.has(key)) continue;
    redelivered.add(key);
    const { type, payload, loop, turnId, sentAt } = row.ended;
    host.emit(type, payload as never, {
      ...(loop ? { loop } : {}),
      ...(turnId ? { turnId } : {}),
      ...(sentAt ? { sentAt } : {}),
    });
  }
  const rows = all.filter((row) => !row.ended);
  const waiting = host.hil.openTurns();
  if (rows.length === 0 && waiting.size === 0) {
    if (summary.redelivered.length > 0)
      host.log(
        'warn',
        `restart recovery: ${summary.redelivered.length} turn end(s) that had not reached the event streams announced again`,
        { event: 'recovered', system: true, data: { ...summary, failedTasks: interrupted.map((task) => task.id) } },
      );
    else if (interrupted.length > 0)
      host.log('warn', `restart recovery: ${interrupted.length} approved tool run(s) were cut short`, {
        event: 'recovered',
        system: true,
        data: { failedTasks: interrupted.map((task) => task.id) },
      });
    return summary;
  }

  // Turns that were mid-flight: running heads, and turns that wait for the owner (any turn kind).
  const heads = new Map<string, { loop: string; kind: string }>();
  const absorbedBy = new Map<string, { loop: string; ids: string[] }>();
  for (const row of rows) {
    if (row.status !== 'running') continue;
    if (row.absorbed_by) {
      const group = absorbedBy.get(row.absorbed_by) ?? { loop: row.loop, ids: [] };
      group.ids.push(row.turn_id);
      absorbedBy.set(row.absorbed_by, group);
    } else heads.set(row.turn_id, { loop: row.loop, kind: row.kind });
  }
  for (const [turnId, turn] of waiting) if (!heads.has(turnId)) heads.set(turnId, { loop: turn.loop, kind: 'trigger' });
  for (const [turnId, group] of absorbedBy)
    if (!heads.has(turnId)) heads.set(turnId, { loop: group.loop, kind: 'chat' });

  for (const [turnId, head] of heads) {
    const absorbed = absorbedBy.get(turnId)?.ids ?? [];
    const available = head.kind !== 'system' && host.loopAvailable(head.loop);
    const open = available ? unansweredCalls(file.loop.ofTurn(head.loop, turnId)) : [];
    const wait = waiting.get(turnId);
    // A turn that waited on a budget task (before a model call, kernel/spend/governor.ts) resumes too.
    const budgetWait = wait !== undefined && [...wait.callIds].some((id) => id.startsWith('budget:'));
    if (available && wait && (budgetWait || open.some((call) => wait.callIds.has(call.id)))) {
      host
        .loop(head.loop)
        .enqueue({ kind: 'resume', turnId, trigger: head.kind, absorbed, at: Date.now() }, { restored: true });
      summary.resumed.push(turnId);
      continue;
    }
    if (available) {
      // What the model reads next time: every open call answered, and why the turn stopped.
      const written = file.transaction(() => [
        ...open.map((call) =>
          file.loop.append({
            loop: head.loop,
            role: 'tool',
            kind: 'tool_result',
            turnId,
            content: {
              toolCallId: call.id,
              name: call.name,
              text: wait?.callIds.has(call.id) ? NOT_RUN : UNKNOWN,
              isError: true,
            },
          }),
        ),
        file.loop.append({
          loop: head.loop,
          role: 'system',
          kind: 'notice',
          turnId,
          content: { text: 'The daemon stopped during this turn (a crash or a kill); the turn ended unfinished.' },
        }),
      ]);
      for (const row of written)
        host.emit('loop.appended', { row_id: row.id, role: row.role, kind: row.kind }, { loop: head.loop, turnId });
    }
    // Owner requests still open for this turn are cancelled (announced) by the emit, then its rows go.
    host.emit(
      'agent.error',
      {
        code: RESTART_ERROR_CODE,
        message: 'the daemon stopped while this turn ran (a crash or a kill); it did not finish',
        turn_id: turnId,
        absorbed_turn_ids: absorbed,
      },
      { loop: head.loop, turnId },
    );
    summary.ended.push(turnId, ...absorbed);
  }

  const discarded = new Map<string, string[]>();
  for (const row of rows) {
    if (row.status !== 'queued') continue;
    const item = queuedItem(row);
    if (item && host.loopAvailable(row.loop)) {
      try {
        host.loop(row.loop).enqueue(item, { restored: true });
        summary.requeued.push(row.turn_id);
        continue;
      } catch {
        // The loop is full or stopped: announced below rather than lost.
      }
    }
    discarded.set(row.loop, [...(discarded.get(row.loop) ?? []), row.turn_id]);
  }
  for (const [loop, turnIds] of discarded) {
    host.emit('chat.discarded', { turn_ids: turnIds, reason: RESTART_ERROR_CODE }, { loop });
    summary.discarded.push(...turnIds);
  }

  host.log(
    'warn',
    `restart recovery: ${summary.redelivered.length > 0 ? `${summary.redelivered.length} unstreamed end(s) announced again, ` : ''}${summary.requeued.length} queued turn(s) queued again, ${summary.resumed.length} resumed, ${summary.ended.length} ended (daemon_restart), ${summary.discarded.length} discarded`,
    { event: 'recovered', system: true, data: { ...summary, failedTasks: interrupted.map((task) => task.id) } },
  );
  return summary;
}
