/**
 * URL-mode elicitations of one server connection (docs/mcp.md "Elicitation"): the ids agt was given, in an
 * `elicitation/create` of URL mode or in a tool call's `URLElicitationRequiredError` (-32042), and the wait
 * for the server's `notifications/elicitation/complete` once the owner accepted (opened the link). A
 * notification matches only an id this connection was given and not yet settled; any other is ignored (a
 * server cannot end another's wait, nor one agt never started). While a call waits, its time limit is
 * kept from running out (the owner is busy in the browser, as during an ask), up to `elicitationTimeoutMs`.
 */
import type { EventPayloads, ToolContext } from '@agt/contracts';
import type { LogRing } from './log-ring.js';

/** How a connection announces the waits (`mcp.elicitation.waiting` / `mcp.elicitation.completed`). */
export type ElicitationEvent = <T extends 'mcp.elicitation.waiting' | 'mcp.elicitation.completed'>(
  type: T,
  payload: EventPayloads[T],
) => void;

/** The call a URL elicitation belongs to. */
export interface ElicitingCall {
  tool: string;
  callId?: string | undefined;
  progress?: ToolContext['progress'];
}

interface Issued {
  call: ElicitingCall;
  /** The server's notification came (possibly before the owner's answer). */
  completed: boolean;
  /** Settles a wait under way. */
  settle?: (outcome: 'completed' | 'timed_out') => void;
}

/** How often a waiting call's time limit is restarted. */
const KEEP_ALIVE_MS = 1_000;
/** At most this many ids are remembered per connection (a server cannot grow the map without bound). */
const MAX_ISSUED = 64;
/** Longer ids are not followed: they would be carried whole in every event about them. */
const MAX_ID_LENGTH = 256;

export class UrlElicitations {
  private readonly issued = new Map<string, Issued>();

  constructor(
    private readonly server: string,
    private readonly logs: LogRing,
    private readonly timeoutMs: number,
    private readonly emit: ElicitationEvent | undefined,
  ) {}

  /** The server gave this id for `call` (not yet answered by the owner). */
  issue(id: string, call: ElicitingCall): void {
    if (this.issued.has(id)) return;
    if (id.length > MAX_ID_LENGTH) {
      this.logs.note(`an elicitation id of ${id.length} characters is not followed (at most ${MAX_ID_LENGTH})`);
      return;
    }
    if (this.issued.size >= MAX_ISSUED) this.issued.delete(this.issued.keys().next().value as string);
    this.issued.set(id, { call, completed: false });
  }

  /** The owner declined or cancelled: the id is settled, a late notification for it is ignored. */
  drop(id: string): void {
    if (!this.issued.get(id)?.settle) this.issued.delete(id);
  }

  /** The connection closed: every wait under way ends unconfirmed. */
  clear(): void {
    for (const entry of [...this.issued.values()]) entry.settle?.('timed_out');
    this.issued.clear();
  }

  /**
   * The owner accepted: announces the wait and resolves once the server confirms (`completed`), after
   * `elicitationTimeoutMs` (`timed_out`), or when `signal` aborts (`timed_out`, not announced: the call ended).
   */
  wait(id: string, signal?: AbortSignal): Promise<'completed' | 'timed_out'> {
    const entry = this.issued.get(id);
    if (!entry) return Promise.resolve('timed_out');
    const { call } = entry;
    const base = { server: this.server, tool: call.tool, call_id: call.callId ?? null, elicitation_id: id };
    this.emit?.('mcp.elicitation.waiting', base);
    this.logs.note(`waiting for the server to confirm elicitation ${id.slice(0, 100)}`);
    return new Promise((resolve) => {
      let done = false;
      const finish = (outcome: 'completed' | 'timed_out', announce = true) => {
        if (done) return;
        done = true;
        clearTimeout(limit);
        clearInterval(alive);
        signal?.removeEventListener('abort', aborted);
        this.issued.delete(id);
        if (announce) this.emit?.('mcp.elicitation.completed', { ...base, outcome });
        if (outcome === 'timed_out') this.logs.note(`elicitation ${id.slice(0, 100)} was not confirmed in time`);
        resolve(outcome);
      };
      const aborted = () => finish('timed_out', false);
      const limit = setTimeout(() => finish('timed_out'), this.timeoutMs);
      const alive = setInterval(() => call.progress?.(), KEEP_ALIVE_MS);
      limit.unref();
      alive.unref();
      signal?.addEventListener('abort', aborted, { once: true });
      entry.settle = finish;
      call.progress?.();
      if (entry.completed || signal?.aborted) finish(entry.completed ? 'completed' : 'timed_out', entry.completed);
    });
  }

  /** `notifications/elicitation/complete`: settles the wait of an id this connection was given. */
  complete(id: unknown): void {
    const key = typeof id === 'string' ? id : '';
    const entry = this.issued.get(key);
    if (!entry) {
      this.logs.note(`ignored a completion of elicitation ${String(id).slice(0, 100)}: not one agt was given`);
      return;
    }
    this.logs.note(`the server says elicitation ${key.slice(0, 100)} is complete`);
    entry.completed = true;
    entry.settle?.('completed');
  }
}
