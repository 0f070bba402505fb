/**
 * Benchmark of the `GET /events` fan-out: a real daemon in this process, N SSE clients over real HTTP
 * (plus one that never reads), M events emitted in bursts. Reports the synchronous cost of `bus.emit`
 * and the time until every reading client has every frame.
 *
 * Run: `node --import tsx bench/events-fanout.ts [clients=50] [events=5000] [payloadBytes=256]`.
 * Timing targets live here, never in tests.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startDaemon } from '../kernel/daemon.js';

export interface FanoutResult {
  clients: number;
  events: number;
  payloadBytes: number;
  emitMicrosPerEvent: number;
  deliveryMs: number;
  framesPerSecond: number;
  droppedClients: number;
}

export async function runEventsFanout(clients = 50, events = 5000, payloadBytes = 256): Promise<FanoutResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agt-bench-'));
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: dataDir,
    AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
    AGT_DAEMON_PORT: '0',
    AGT_LOG_LEVEL: 'silent',
    AGT_EXTENSIONS: join(dataDir, 'none.json'),
  };
  (await import('node:fs')).writeFileSync(env.AGT_EXTENSIONS, '{"extensions":[]}');
  const daemon = await startDaemon({ env, print: () => {} });
  const token = readFileSync(join(dataDir, 'daemon-token'), 'utf8').trim();
  const bus = daemon.kernel.bus;
  const requests: Array<{ destroy(): void }> = [];
  try {
    const start = bus.latest;
    const target = start + events;
    let done = 0;
    const allDone = new Promise<void>((resolve) => {
      for (let i = 0; i < clients; i++) {
        const request = get(`${daemon.url}/events`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
          let tail = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            // Only the last id matters: frames arrive in order.
            const seen = tail + chunk;
            if (seen.includes(`id: ${target}\n`) && ++done === clients) resolve();
            tail = seen.slice(-32); // an id line split across chunks
          });
        });
        requests.push(request);
      }
    });
    // One client that never reads: it must cost the others nothing.
    requests.push(get(`${daemon.url}/events`, { headers: { authorization: `Bearer ${token}` } }, (res) => res.pause()));
    while (daemon.kernel.eventStream!.stats().clients < clients + 1) await new Promise((r) => setTimeout(r, 5));

    const message = 'x'.repeat(payloadBytes);
    let emitNs = 0n;
    const began = process.hrtime.bigint();
    for (let sent = 0; sent < events; ) {
      // Bursts of 100, yielding between them so sockets can drain (as real turns do).
      const t0 = process.hrtime.bigint();
      for (let k = 0; k < 100 && sent < events; k++, sent++) {
        bus.emit('log.written', { agentId: 'bench', payload: { level: 'info', origin: null, event: null, message } });
      }
      emitNs += process.hrtime.bigint() - t0;
      await new Promise((r) => setImmediate(r));
    }
    await allDone;
    const deliveryMs = Number(process.hrtime.bigint() - began) / 1e6;
    return {
      clients,
      events,
      payloadBytes,
      emitMicrosPerEvent: Number(emitNs) / 1e3 / events,
      deliveryMs,
      framesPerSecond: Math.round((events * clients) / (deliveryMs / 1000)),
      droppedClients: daemon.kernel.eventStream!.stats().dropped,
    };
  } finally {
    for (const request of requests) request.destroy();
    await daemon.shutdown('bench');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [clients, events, payload] = process.argv.slice(2).map(Number);
  const result = await runEventsFanout(clients || undefined, events || undefined, payload || undefined);
  console.log(JSON.stringify(result));
}
