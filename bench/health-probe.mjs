#!/usr/bin/env node
/**
 * A `/health` prober in a process of its own (bench/chat-burst.ts): its timer and its measurements do not
 * wait for the bench's own busy event loop. One keep-alive connection; a probe every `intervalMs` (the
 * next waits for the previous answer, so a held daemon shows as one long probe, not a pile of them).
 * argv: port intervalMs. IPC: {op: 'stop'} → sends {op: 'probes', probes: [{at, ms, status}]} and exits.
 */
import { Agent, request } from 'node:http';

const [port, intervalMs] = [Number(process.argv[2]), Number(process.argv[3] ?? 100)];
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const probes = [];
let stopped = false;

function probe() {
  return new Promise((done) => {
    // Wall-clock milliseconds (performance.now() counts from each process's own start).
    const since = performance.timeOrigin + performance.now();
    const req = request({ host: '127.0.0.1', port, path: '/health', agent }, (res) => {
      res.resume();
      res.on('end', () =>
        done({ at: since, ms: performance.timeOrigin + performance.now() - since, status: res.statusCode ?? 0 }),
      );
    });
    req.on('error', () => done({ at: since, ms: performance.timeOrigin + performance.now() - since, status: 0 }));
    req.end();
  });
}

async function loop() {
  while (!stopped) {
    const since = performance.now();
    probes.push(await probe());
    const rest = intervalMs - (performance.now() - since);
    if (rest > 0) await new Promise((done) => setTimeout(done, rest));
  }
}

process.on('message', (message) => {
  if (message.op !== 'stop') return;
  stopped = true;
  process.send({ op: 'probes', probes }, () => process.exit(0));
});
process.send({ op: 'ready' });
void loop();
