/**
 * A raw Server-Sent Events client for tests: `http.get` plus a line parser that also keeps comments
 * (`: connected`, `: heartbeat`), which EventSource implementations hide. Messages are consumed in
 * order with `next()`; a failed wait rejects after a failsafe delay instead of hanging the suite.
 */
import { get, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';

export interface SseMessage {
  /** Set for a comment line (text after the colon, trimmed); the other fields are then absent. */
  comment?: string;
  id?: string;
  event?: string;
  data?: string;
}

export interface SseStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body of a non-200 answer. */
  body?: any;
  /** Every message parsed so far, consumed or not. */
  messages: SseMessage[];
  /** The next unconsumed message (comments included). */
  next(): Promise<SseMessage>;
  /** Skips comments; returns the next event message with its data parsed as JSON. */
  nextEvent(): Promise<{ id?: string; event?: string; data: any }>;
  /** Resolves when the stream is over; `complete` is true for a clean end, false when the connection was cut. */
  ended: Promise<{ complete: boolean }>;
  /** Calls `listener` with every message from now on, as it is parsed. */
  onMessage(listener: (message: SseMessage) => void): void;
  close(): void;
}

export const WAIT_FAILSAFE_MS = 5_000;

export function parseSse(onMessage: (message: SseMessage) => void): (chunk: string) => void {
  let buffer = '';
  let current: SseMessage = {};
  return (chunk) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        if (Object.keys(current).length > 0) onMessage(current);
        current = {};
      } else if (line.startsWith(':')) {
        onMessage({ comment: line.slice(1).trim() });
      } else {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') current.data = current.data === undefined ? value : `${current.data}\n${value}`;
        else if (field === 'id' || field === 'event') current[field] = value;
      }
    }
  };
}

/** Opens `GET url` with the given headers; resolves once the status line arrived. */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const request = get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res: IncomingMessage) => {
      res.setEncoding('utf8');
      res.on('error', () => {});
      const messages: SseMessage[] = [];
      let consumed = 0;
      let wake: (() => void) | undefined;
      let done = false;
      const listeners: Array<(message: SseMessage) => void> = [];
      const ended = new Promise<{ complete: boolean }>((finish) => {
        res.once('close', () => {
          done = true;
          wake?.();
          finish({ complete: res.complete });
        });
      });
      const next = async (): Promise<SseMessage> => {
        const deadline = Date.now() + WAIT_FAILSAFE_MS;
        while (consumed >= messages.length) {
          if (done) throw new Error('stream ended while waiting for a message');
          if (Date.now() >= deadline) throw new Error(`no SSE message within ${WAIT_FAILSAFE_MS} ms`);
          await new Promise<void>((woken) => {
            const timer = setTimeout(woken, deadline - Date.now());
            wake = () => {
              clearTimeout(timer);
              woken();
            };
          });
          wake = undefined;
        }
        return messages[consumed++]!;
      };
      const stream: SseStream = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        messages,
        next,
        async nextEvent() {
          for (;;) {
            const message = await next();
            if (message.comment !== undefined) continue;
            return { id: message.id, event: message.event, data: JSON.parse(message.data ?? 'null') };
          }
        },
        ended,
        onMessage: (listener) => listeners.push(listener),
        close: () => request.destroy(),
      };
      if (stream.status !== 200) {
        let text = '';
        res.on('data', (chunk: string) => (text += chunk));
        res.once('end', () => {
          try {
            stream.body = JSON.parse(text);
          } catch {
            stream.body = text;
          }
          resolve(stream);
        });
        return;
      }
      const feed = parseSse((message) => {
        messages.push(message);
        wake?.();
        for (const listener of listeners) listener(message);
      });
      res.on('data', feed);
      resolve(stream);
    });
    // After the answer arrived, a cut connection surfaces through `ended`, not as an error.
    request.on('error', (error) => reject(error));
  });
}
