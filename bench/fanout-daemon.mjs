#!/usr/bin/env node
/**
 * The benchmark's SSE fan-out daemon: the BUILT daemon module (dist/, see scripts/build.mjs) started in
 * this process, plus an emitter the benchmark drives over IPC, so events enter the bus at a set rate
 * without any other work. Each event's message starts with `@<emit time in ms, µs precision>@`, so a
 * client can measure delivery latency (same machine, same clock).
 *
 * IPC from the parent: {op: 'emit', rate, count, payloadBytes} → {op: 'emitted', first, last, count, ms,
 * loopDelayMaxMs, gcMaxMs, gcTotalMs}; {op: 'stats'} → {op: 'stats', clients, dropped, flushes, writes, cpuMs}; {op:
 * 'stop'}. Sends {op: 'ready', url} once listening. Env: as the daemon's (AGT_DAEMON_SETTINGS, AGT_DAEMON_PORT,
 * AGT_EXTENSIONS, ...).
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const info = JSON.parse(readFileSync(new URL('../dist/.agt-build.json', import.meta.url), 'utf8'));
const { startDaemon } = await import(new URL(`../dist/${info.daemon}`, import.meta.url).href);
const daemon = await startDaemon({ env: process.env, print: () => {} });
const bus = daemon.kernel.bus;
// Pacing A/B in one build: AGT_BENCH_FLUSH_SPACING / AGT_BENCH_FLUSH_MAX_WAIT_MS (kernel/events/sse-pacing.ts).
const knob = (name) => (process.env[name] ? Number(process.env[name]) : undefined);
const pacing = { spacing: knob('AGT_BENCH_FLUSH_SPACING'), maxWaitMs: knob('AGT_BENCH_FLUSH_MAX_WAIT_MS') };
if (pacing.spacing !== undefined || pacing.maxWaitMs !== undefined) daemon.kernel.eventStream.configure({ pacing });
const now = () => performance.timeOrigin + performance.now();

// How late the daemon's event loop ran while it emitted (its own stalls, beside the readers').
const loopDelay = monitorEventLoopDelay({ resolution: 5 });
// Garbage-collection pauses while it emits (a long one shows up as the loop delay above).
const gc = { maxMs: 0, totalMs: 0, on: false };
new PerformanceObserver((list) => {
  if (!gc.on) return;
  for (const entry of list.getEntries()) {
    gc.maxMs = Math.max(gc.maxMs, entry.duration);
    gc.totalMs += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });

async function emit({ rate, count, payloadBytes }) {
  loopDelay.reset();
  loopDelay.enable();
  Object.assign(gc, { maxMs: 0, totalMs: 0, on: true });
  const padding = 'x'.repeat(Math.max(0, payloadBytes - 24));
  const first = bus.latest + 1;
  const began = performance.now();
  let sent = 0;
  while (sent < count) {
    // As many as are due by now (1 ms ticks): a steady rate, not one burst.
    const due = Math.min(count, Math.floor(((performance.now() - began) / 1000) * rate) + 1);
    for (; sent < due; sent++) {
      bus.emit('log.written', {
        agentId: 'bench',
        payload: { level: 'info', origin: null, event: null, message: `@${now().toFixed(3)}@${padding}` },
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  loopDelay.disable();
  gc.on = false;
  return {
    first,
    last: bus.latest,
    count: sent,
    ms: performance.now() - began,
    loopDelayMaxMs: loopDelay.max / 1e6,
    gcMaxMs: gc.maxMs,
    gcTotalMs: gc.totalMs,
  };
}

process.on('message', async (message) => {
  if (message.op === 'emit') process.send({ op: 'emitted', ...(await emit(message)) });
  else if (message.op === 'stats') {
    const cpu = process.cpuUsage();
    const hub = daemon.kernel.eventStream;
    process.send({ op: 'stats', ...hub.stats(), ...hub.writeStats?.(), cpuMs: (cpu.user + cpu.system) / 1000 });
  } else if (message.op === 'stop') {
    await daemon.shutdown('bench');
    process.exit(0);
  }
});
process.send({ op: 'ready', url: daemon.url });
