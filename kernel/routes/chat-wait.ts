/**
 * `POST /agents/{id}/chat?wait=true` (or `Prefer: wait=N`): the answer waits for the end of the turn, as
 * LangGraph's `runs/wait` does, instead of answering 202 at once. The end is read off the event bus
 * (the turn's `turn.completed`, as `turn_id` or absorbed, its `agent.error` or a `chat.discarded` naming
 * it), so a waiting request costs one bus listener and one timer, both dropped when it answers or its
 * client goes away.
 */
import type { EventBus, UmbilicalEvent } from '@agt/contracts';

/** The longest a chat may wait for its turn (`?wait=true` waits this long); then it answers 202 as usual. */
export const MAX_CHAT_WAIT_S = 300;

/** How the turn ended, as the 200 answer of a waiting chat carries it. */
export interface TurnOutcome {
  status: 'completed' | 'error' | 'discarded';
  /** The reply text of the turn (null when it ended without one). */
  text: string | null;
  stopReason: string | null;
  llmCalls: number;
  toolCalls: number;
  /** `agent.error`'s code and message, or the discard reason. */
  error: { code: string; message: string } | null;
}

/** Seconds to wait: `?wait=true` is the maximum, `Prefer: wait=N` (RFC 7240) is N capped by it; undefined: no wait. */
export function waitSeconds(query: boolean | undefined, prefer: string | undefined): number | undefined {
  const match = prefer ? /(?:^|[;,\s])wait=(\d{1,9})(?:$|[;,\s])/i.exec(prefer) : null;
  if (match) return Math.min(Number(match[1]), MAX_CHAT_WAIT_S);
  return query ? MAX_CHAT_WAIT_S : undefined;
}

function outcomeOf(event: UmbilicalEvent, turnId: string): TurnOutcome | undefined {
  const p = event.payload as Record<string, unknown>;
  const names = (list: unknown) => Array.isArray(list) && list.includes(turnId);
  if (event.event_type === 'turn.completed' && (p.turn_id === turnId || names(p.absorbed_turn_ids))) {
    return {
      status: 'completed',
      text: typeof p.text === 'string' ? p.text : null,
      stopReason: typeof p.stop_reason === 'string' ? p.stop_reason : null,
      llmCalls: Number(p.llm_calls ?? 0),
      toolCalls: Number(p.tool_calls ?? 0),
      error: null,
    };
  }
  if (event.event_type === 'agent.error' && (p.turn_id === turnId || names(p.absorbed_turn_ids))) {
    return {
      status: 'error',
      text: null,
      stopReason: null,
      llmCalls: 0,
      toolCalls: 0,
      error: { code: String(p.code), message: String(p.message) },
    };
  }
  if (event.event_type === 'chat.discarded' && names(p.turn_ids)) {
    return {
      status: 'discarded',
      text: null,
      stopReason: null,
      llmCalls: 0,
      toolCalls: 0,
      error: { code: 'discarded', message: `the chat was discarded (${String(p.reason)})` },
    };
  }
  return undefined;
}

export interface TurnWatch {
  /** Starts waiting for `turnId` (events seen since the watch began count); resolves undefined on timeout or cancel. */
  wait(turnId: string, seconds: number, earlier?: readonly UmbilicalEvent[]): Promise<TurnOutcome | undefined>;
  cancel(): void;
}

/**
 * Listens to one agent's events from now on (before the chat is queued, so the end cannot be missed);
 * `wait` then picks the turn's end from what was seen and what comes.
 */
export function watchTurns(bus: EventBus, agentId: string): TurnWatch {
  const seen: UmbilicalEvent[] = [];
  let check: ((event: UmbilicalEvent) => void) | undefined;
  let finish: ((outcome: TurnOutcome | undefined) => void) | undefined;
  const unsubscribe = bus.subscribe((event) => {
    if (event.agent_id !== agentId) return;
    if (check) check(event);
    else seen.push(event);
  });
  return {
    wait(turnId, seconds, earlier = []) {
      return new Promise((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        finish = (outcome) => {
          finish = undefined;
          check = undefined;
          clearTimeout(timer);
          unsubscribe();
          resolve(outcome);
        };
        for (const event of [...earlier, ...seen]) {
          const outcome = outcomeOf(event, turnId);
          if (outcome) return finish(outcome);
        }
        seen.length = 0;
        check = (event) => {
          const outcome = outcomeOf(event, turnId);
          if (outcome) finish?.(outcome);
        };
        timer = setTimeout(() => finish?.(undefined), seconds * 1000);
        timer.unref();
      });
    },
    cancel() {
      if (finish) finish(undefined);
      else unsubscribe();
    },
  };
}
