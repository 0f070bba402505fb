/**
 * `GET /events?scope=<name>`: a stream an extension's event scope feeds (contracts/event-scopes.ts), written
 * as the local stream is: `: connected`, a `stream.hello` control frame `{scope}`, then frames `id: <cursor>`,
 * `event: <event_type>`, `data: {cursor, event, daemon}`, and `: heartbeat` every 30 s. A client that does
 * not keep up (more than {@link MAX_BUFFERED_BYTES} waiting) is ended with a `stream.end` frame and resumes
 * with its last cursor; so does every client when the scope ends.
 */
import type { OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { EventScope, OpenScope, ScopedEvent, ScopeStart } from '@agt/contracts';
import { controlFrame, writeSseHead } from './sse-client.js';

export const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
const HEARTBEAT_MS = 30_000;

export class ScopeStreams {
  private readonly open = new Set<() => void>();

  /** Starts a stream on a hijacked response; rejects (before any byte is written) when the scope cannot start. */
  async serve(
    res: ServerResponse,
    scope: EventScope,
    start: ScopeStart,
    headers: Record<string, OutgoingHttpHeader | undefined> = {},
  ): Promise<void> {
    let ended = false;
    let opened: OpenScope | undefined;
    let heartbeat: NodeJS.Timeout | undefined;
    const pending: string[] = [];
    let started = false;
    const finish = (reason: string | null) => {
      if (ended) return;
      ended = true;
      clearInterval(heartbeat);
      this.open.delete(stop);
      opened?.close();
      if (started && !res.writableEnded) {
        if (reason) res.write(controlFrame('stream.end', { reason }));
        res.end();
      }
    };
    const stop = () => finish('the daemon is stopping');
    const write = (chunk: string) => {
      if (ended) return;
      if (!started) {
        pending.push(chunk);
        return;
      }
      res.write(chunk);
      if (res.writableLength > MAX_BUFFERED_BYTES) finish('the client fell behind; resume with Last-Event-ID');
    };
    const send = (item: ScopedEvent) => {
      if (start.agentId !== null && item.event.agent_id !== start.agentId) return;
      write(
        `id: ${item.cursor}\nevent: ${item.event.event_type}\ndata: ${JSON.stringify({ cursor: item.cursor, event: item.event, daemon: item.daemon })}\n\n`,
      );
    };
    opened = await scope.open(start, send, (reason) => finish(reason));
    if (ended) {
      opened.close();
      return;
    }
    writeSseHead(res, headers);
    res.write(`: connected\n\n${controlFrame('stream.hello', { scope: scope.name, after: start.after })}`);
    started = true;
    for (const chunk of pending.splice(0)) write(chunk);
    heartbeat = setInterval(() => write(': heartbeat\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    this.open.add(stop);
    res.on('close', () => finish(null));
  }

  /** Ends every scoped stream (the daemon stops). */
  close(): void {
    for (const stop of [...this.open]) stop();
  }
}
