/**
 * The daemon's event stream (`GET /events`, Server-Sent Events) through the `eventsource` package, with
 * the bearer token in a header (the stream takes it there). It reconnects by itself and
 * resumes from the last cursor; `opened` resolves at the first `stream.hello`.
 */
import { EventSource } from 'eventsource';
import { EVENT_DESCRIPTIONS } from '../contracts/events.js';
import type { ApiClient } from './client.js';
import { CliError } from './errors.js';

/** The parts of an UmbilicalEvent the CLI reads. */
export interface AgtEvent {
  seq: number;
  event_type: string;
  timestamp: number;
  source: string;
  agent_id: string | null;
  loop?: string;
  turn_id?: string;
  payload: Record<string, any>;
}

export interface EventStream {
  /** Resolves once the daemon said hello; rejects when the first connection fails. */
  opened: Promise<void>;
  close(): void;
}

export function openEvents(
  client: ApiClient,
  agentId: string | undefined,
  onEvent: (event: AgtEvent) => void,
  /** Told once per outage when the stream drops after it was open (it reconnects by itself and resumes). */
  onLost: (reason: string) => void = (reason) =>
    process.stderr.write(`agt: the event stream dropped (${reason}); reconnecting\n`),
): EventStream {
  const url = new URL(`${client.connection.url}/events`);
  if (agentId) url.searchParams.set('agentId', agentId);
  let hello = false;
  let settle!: { resolve: () => void; reject: (error: Error) => void };
  const opened = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  const source = new EventSource(url, {
    fetch: async (input, init) => {
      const response = await client.fetch(input as string, init as RequestInit);
      // A refusal is final: reported once, never retried.
      if (response.status >= 400) {
        const body = await response
          .clone()
          .json()
          .catch(() => undefined);
        settle.reject(client.refusal(response.status, body));
      }
      return response as never;
    },
  });
  source.addEventListener('stream.hello', () => {
    if (!hello) {
      hello = true;
      settle.resolve();
    }
  });
  source.onmessage = () => {};
  // Every event arrives as an SSE event named by its type: one listener per type of the contract.
  const listen = (type: string) => {
    source.addEventListener(type, (message) => {
      try {
        const frame = JSON.parse((message as MessageEvent).data) as { event: AgtEvent };
        onEvent(frame.event);
      } catch {
        // A frame that is not JSON is not ours to show.
      }
    });
  };
  for (const type of EVENT_TYPES) listen(type);
  let lost = false;
  source.addEventListener('stream.hello', () => (lost = false));
  source.onerror = (error) => {
    if (hello && !lost) {
      lost = true;
      onLost((error as { message?: string }).message ?? 'connection closed');
    }
    if (!hello) {
      const failure = (error as { message?: string }).message ?? 'the event stream failed';
      settle.reject(error instanceof CliError ? error : new CliError(`cannot open the event stream: ${failure}`));
    }
  };
  void opened.catch(() => source.close());
  return { opened, close: () => source.close() };
}

/**
 * The event types the CLI listens for: every type of the contract's event map (the daemon names each
 * SSE frame by its type, and an EventSource hears only the names it listens to). A type an extension
 * emits outside the contract is not shown.
 */
export const EVENT_TYPES = Object.keys(EVENT_DESCRIPTIONS);
