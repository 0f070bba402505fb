/**
 * A daemon's events as a client sees them: `GET /events` read from the moment of the call, every
 * UmbilicalEvent kept in order, and `waitFor(predicate)` resolving on the first one (already seen or still to
 * come) that matches. The black-box tier's replacement for subscribing to the kernel's bus.
 */
import type { UmbilicalEvent } from '../../contracts/events.js';
import type { DaemonClient } from './daemon.js';
import { openSse, type SseMessage } from './sse-client.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface EventLog {
  events: UmbilicalEvent[];
  /** The stream's epoch (its `stream.hello`) and the last cursor read: where a client following the daemon
   *  across a restart resumes (`?since=<cursor>&epoch=<epoch>`, docs/events.md). */
  readonly resume: { epoch: string; cursor: number };
  /** The first event from `from` (an index into `events`, default 0) matching `match`; rejects after `ms`. */
  waitFor(
    match: (event: UmbilicalEvent) => boolean,
    what: string,
    options?: { from?: number; ms?: number },
  ): Promise<UmbilicalEvent>;
  close(): void;
}

export async function eventLog(t: Teardown, d: DaemonClient, query = ''): Promise<EventLog> {
  const stream = await openSse(`${d.url}/events${query}`, { authorization: `Bearer ${d.token}` });
  if (stream.status !== 200) throw new Error(`GET /events: ${stream.status} ${JSON.stringify(stream.body)}`);
  const events: UmbilicalEvent[] = [];
  const waiters = new Set<() => void>();
  const resume = { epoch: '', cursor: 0 };
  const take = (message: SseMessage) => {
    if (message.event === 'stream.hello' && message.data) resume.epoch = JSON.parse(message.data).epoch;
    // Event frames carry an id (the cursor); control frames (stream.hello, stream.gap) and comments do not.
    if (message.id === undefined || message.data === undefined) return;
    resume.cursor = Number(message.id);
    events.push((JSON.parse(message.data) as { event: UmbilicalEvent }).event);
    for (const wake of waiters) wake();
  };
  stream.messages.forEach(take);
  stream.onMessage(take);
  const close = () => stream.close();
  t.teardown(close);
  return {
    events,
    resume,
    close,
    waitFor(match, what, { from = 0, ms = 15_000 } = {}) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.slice(from).find(match);
          if (!found) return;
          cleanup();
          resolve(found);
        };
        const deadline = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${what} (${events.length} events seen)`));
        }, ms);
        const cleanup = () => {
          clearTimeout(deadline);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}
