/**
 * Follows one chat turn on the event bus for the MCP `chat` tool. The watch subscribes BEFORE the chat is
 * queued (a turn may start, and even end, before `chat()` returns) and keeps the agent's events; `follow`
 * names the turn. A chat absorbed into another starting turn (`chat.delivered`) follows that turn too.
 */
import type { EventBus, UmbilicalEvent } from '@agt/contracts';

export type TurnStep =
  | { type: 'progress'; message: string }
  | { type: 'waiting'; kind: 'approval'; taskId: string; tool: string; args: unknown }
  | { type: 'waiting'; kind: 'ask'; requestId: string; question: string }
  | { type: 'waiting'; kind: 'suspend'; requestId: string; reason: string }
  | { type: 'end'; status: 'completed'; text: string }
  | { type: 'end'; status: 'interrupted'; text: string }
  | { type: 'end'; status: 'error'; code: string }
  | { type: 'end'; status: 'discarded'; reason: string };

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

export class TurnWatch {
  private readonly kept: UmbilicalEvent[] = [];
  private readonly ids = new Set<string>();
  private wake: (() => void) | undefined;
  private readonly stop: () => void;

  constructor(bus: EventBus, agentId: string) {
    this.stop = bus.subscribe((event) => {
      if (event.agent_id !== agentId) return;
      this.kept.push(event);
      this.wake?.();
    });
  }

  follow(turnId: string): void {
    this.ids.add(turnId);
  }

  close(): void {
    this.stop();
    this.wake?.();
  }

  /** The next step of the followed turn, or undefined when `ms` pass (or `signal` aborts) first. */
  async next(ms: number, signal?: AbortSignal): Promise<TurnStep | undefined> {
    const until = Date.now() + ms;
    for (;;) {
      while (this.kept.length > 0) {
        const step = this.step(this.kept.shift()!);
        if (step) return step;
      }
      const left = until - Date.now();
      if (left <= 0 || signal?.aborted) return undefined;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          this.wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, left);
        signal?.addEventListener('abort', done, { once: true });
        this.wake = done;
      });
    }
  }

  private mine(event: UmbilicalEvent, payload: Record<string, unknown>): boolean {
    const named = [event.turn_id, payload.turn_id, ...strings(payload.absorbed_turn_ids), ...strings(payload.turn_ids)];
    return named.some((id) => typeof id === 'string' && this.ids.has(id));
  }

  private step(event: UmbilicalEvent): TurnStep | undefined {
    const payload = record(event.payload);
    if (!this.mine(event, payload)) return undefined;
    switch (event.event_type) {
      case 'chat.delivered':
        // Absorbed into the turn that starts: its events are ours from now on.
        if (event.turn_id) this.ids.add(event.turn_id);
        return undefined;
      case 'turn.started':
        return { type: 'progress', message: 'the turn started' };
      case 'tool.started':
        return { type: 'progress', message: `running tool ${String(payload.tool)}` };
      case 'hil.requested':
        if (payload.kind === 'approval')
          return {
            type: 'waiting',
            kind: 'approval',
            taskId: String(payload.taskId),
            tool: String(payload.tool),
            args: payload.args,
          };
        if (payload.kind === 'ask')
          return {
            type: 'waiting',
            kind: 'ask',
            requestId: String(payload.requestId),
            question: String(payload.question),
          };
        return {
          type: 'waiting',
          kind: 'suspend',
          requestId: String(payload.requestId),
          reason: String(payload.reason),
        };
      case 'hil.resolved':
        return { type: 'progress', message: `${String(payload.kind)} ${String(payload.resolution)}` };
      case 'turn.completed': {
        const reply = typeof payload.text === 'string' ? payload.text : '';
        return payload.stop_reason === 'interrupted'
          ? { type: 'end', status: 'interrupted', text: reply }
          : { type: 'end', status: 'completed', text: reply };
      }
      case 'agent.error':
        // The code only: the message may name files or hosts of this machine.
        return { type: 'end', status: 'error', code: String(payload.code) };
      case 'chat.discarded':
        return { type: 'end', status: 'discarded', reason: String(payload.reason) };
      default:
        return undefined;
    }
  }
}
