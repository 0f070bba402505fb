/**
 * The daemon's event stream (`GET /events`) read through fetch, so the request carries the console's
 * header and cookie (EventSource can send neither a header nor, here, the right credentials). A dropped
 * connection is reopened with `Last-Event-ID` (the last frame's cursor) and `?epoch=`: the daemon
 * replays what was missed, or says `stream.gap` (then views reload from the REST API).
 */
import { signal } from '@preact/signals';
import { sessionEnded, type EventFrame, type UmbilicalEvent } from './api.js';

export type Listener = (event: UmbilicalEvent, cursor: number) => void;

export const streamState = signal<'connecting' | 'open' | 'closed'>('connecting');
/** Bumped on each (re)connect with a gap or a new epoch: views that cache REST state reload. */
export const resyncs = signal(0);

export class EventStream {
  private readonly listeners = new Set<Listener>();
  private cursor: number | null = null;
  private epoch: string | null = null;
  private controller: AbortController | null = null;
  private stopped = false;
  private retryMs = 250;
  /** The highest `seq` seen per agent (`''`: daemon-wide events). */
  private readonly lastSeq = new Map<string, number>();
  /** How many times the connection was (re)opened; the events view shows it. */
  readonly connects = signal(0);

  on(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private running = false;

  start(): void {
    this.stopped = false;
    if (this.running) return;
    this.running = true;
    void this.loop().finally(() => (this.running = false));
  }

  stop(): void {
    this.stopped = true;
    this.controller?.abort();
  }

  /** Ends the current connection as a network drop would: the next one resumes from the cursor. */
  drop(): void {
    this.controller?.abort();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.connect();
        this.retryMs = 250;
      } catch {
        // A drop or a refused connect: retry below.
      }
      if (this.stopped) break;
      streamState.value = 'connecting';
      await new Promise((done) => setTimeout(done, this.retryMs));
      this.retryMs = Math.min(this.retryMs * 2, 5000);
    }
    streamState.value = 'closed';
  }

  private async connect(): Promise<void> {
    this.controller = new AbortController();
    const headers: Record<string, string> = { 'x-agt-console': '1', accept: 'text/event-stream' };
    if (this.cursor !== null) headers['last-event-id'] = String(this.cursor);
    const query = this.epoch ? `?epoch=${encodeURIComponent(this.epoch)}` : '';
    const res = await fetch(`/events${query}`, { headers, credentials: 'same-origin', signal: this.controller.signal });
    if (res.status === 401) {
      // The session ended: stop here; the page goes back to its login form.
      sessionEnded.value = true;
      this.stopped = true;
      return;
    }
    if (!res.ok || !res.body) throw new Error(`events: ${res.status}`);
    streamState.value = 'open';
    this.connects.value++;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        this.frame(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
  }

  private frame(block: string): void {
    let name = 'message';
    let data = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) name = line.slice(6).trim();
      else if (line.startsWith('data:')) data += line.slice(5).trim();
    }
    if (!data) return;
    const body = JSON.parse(data) as Record<string, unknown>;
    if (name === 'stream.hello') {
      const epoch = String(body.epoch);
      if (this.epoch !== null && epoch !== this.epoch) {
        this.cursor = null;
        this.lastSeq.clear();
        resyncs.value++;
      }
      this.epoch = epoch;
      return;
    }
    if (name === 'stream.gap') {
      resyncs.value++;
      return;
    }
    const frame = body as unknown as EventFrame;
    if (!frame.event) return;
    this.cursor = frame.cursor;
    // Deduplicate by agent + seq (docs/events.md): a replay never shows a frame twice.
    const key = frame.event.agent_id ?? '';
    if ((this.lastSeq.get(key) ?? 0) >= frame.event.seq) return;
    this.lastSeq.set(key, frame.event.seq);
    for (const listener of this.listeners) listener(frame.event, frame.cursor);
  }
}

export const events = new EventStream();

/**
 * The frames the daemon still holds (its replay buffer), newest `max` of them: a second, short stream
 * from `?since=0` (of one agent when `agentId` is given) read up to the `latestCursor` its `stream.hello`
 * names or until it pauses, then closed.
 */
export async function backlog(
  max: number,
  agentId?: string,
): Promise<Array<{ cursor: number; event: UmbilicalEvent }>> {
  const controller = new AbortController();
  const res = await fetch(`/events?since=0${agentId ? `&agentId=${encodeURIComponent(agentId)}` : ''}`, {
    headers: { 'x-agt-console': '1', accept: 'text/event-stream' },
    credentials: 'same-origin',
    signal: controller.signal,
  });
  if (!res.ok || !res.body) throw new Error(`events: ${res.status}`);
  const rows: Array<{ cursor: number; event: UmbilicalEvent }> = [];
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let latest = Infinity;
  let buffer = '';
  // A buffer that never reaches `latestCursor` (frames of other streams only) ends here, with what came.
  const timer = setTimeout(() => controller.abort(), 3000);
  try {
    // The replay is written at once when the stream opens: a pause after `stream.hello` means it is all
    // here (a filtered stream never reaches `latestCursor` when the newest frame is another agent's).
    const idle = () =>
      new Promise<{ done: true; value: undefined }>((done) =>
        setTimeout(() => done({ done: true, value: undefined }), 300),
      );
    while (rows.length === 0 || rows[rows.length - 1]!.cursor < latest) {
      const { value, done } = await (latest === Infinity ? reader.read() : Promise.race([reader.read(), idle()]));
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const name = /^event:\s*(.*)$/m.exec(block)?.[1];
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trim())
          .join('');
        if (!data) continue;
        const body = JSON.parse(data);
        if (name === 'stream.hello') latest = Number(body.latestCursor ?? 0);
        else if (body.event) rows.push({ cursor: body.cursor, event: body.event });
      }
      if (latest === 0) break;
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return rows.slice(-max);
}
