/**
 * Turn ends for the bench scripts (bench/run.ts, bench/turn-rate.ts): one `GET /events` reader that
 * resolves a turn id at its `turn.completed` (or at an `agent.error` naming it; counted as a failure),
 * with the time it arrived. A turn absorbed into another ends with it.
 */
import { request as httpRequest } from 'node:http';
import { TOKEN } from './http.js';

export interface TurnWatch {
  /** The stream answered (chats sent before may end unseen). */
  ready: Promise<void>;
  /** When `turnId` ended (performance.now()); fails after 30 s. */
  until(turnId: string): Promise<number>;
  failures(): number;
  close(): void;
}

export function watchTurns(port: number): TurnWatch {
  const ended = new Map<string, number>();
  const waiting = new Map<string, (at: number) => void>();
  let failures = 0;
  const settle = (id: string, at: number) => {
    const waiter = waiting.get(id);
    if (waiter) {
      waiting.delete(id);
      waiter(at);
    } else ended.set(id, at);
  };
  const onEvent = (event: any) => {
    if (event?.event_type === 'turn.completed') {
      for (const id of [event.payload.turn_id, ...(event.payload.absorbed_turn_ids ?? [])])
        settle(id, performance.now());
    } else if (event?.event_type === 'agent.error' && event.turn_id) {
      failures++;
      settle(event.turn_id, performance.now());
    }
  };
  let req: ReturnType<typeof httpRequest>;
  const ready = new Promise<void>((done, fail) => {
    req = httpRequest(
      { host: '127.0.0.1', port, path: '/events', headers: { authorization: `Bearer ${TOKEN}` } },
      (res) => {
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = frame.split('\n').find((line) => line.startsWith('data: {'));
            if (data) onEvent(JSON.parse(data.slice(6)).event);
          }
        });
        done();
      },
    );
    req.on('error', fail);
    req.end();
  });
  return {
    ready,
    close: () => req.destroy(),
    failures: () => failures,
    until: (id) =>
      ended.has(id)
        ? Promise.resolve(ended.get(id)!)
        : new Promise<number>((done, fail) => {
            const timer = setTimeout(() => fail(new Error(`turn ${id} did not complete within 30 s`)), 30_000);
            waiting.set(id, (at) => (clearTimeout(timer), done(at)));
          }),
  };
}
