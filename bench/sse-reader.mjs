#!/usr/bin/env node
/**
 * SSE readers for the fan-out bench (bench/sse-fanout.ts): `clients` streams on `GET /events`, in a
 * process of their own (several such processes can share the reading: `AGT_BENCH_READERS`).
 *
 * Kept as cheap as a reader can be, so the figure is the daemon's: a raw TCP socket per stream (the
 * request written by hand; no HTTP client parsing chunk by chunk), each socket read handed to a callback
 * in one shared buffer (`onread`: no Buffer, stream push or `data` event per read), the clock read once
 * per read, the bytes scanned for the one-byte `@` (memchr) and never decoded. Chunked framing never
 * splits a frame (the daemon writes whole frames), so the timestamps are found in the raw bytes. Each
 * event's message starts with `@<emit time in ms>@` (bench/fanout-daemon.mjs); the latency (read time −
 * emit time, same clock) goes into a histogram of 0.1 ms buckets (a typed array: no allocation per
 * frame). Profiled (session 5), a 12-byte pattern search per frame (`indexOf` of `"message":"@`) was a
 * third of the readers' busy time.
 *
 * IPC from the parent: {op: 'connect', url, token, clients, skip (padding bytes after each timestamp)} → {op:
 * 'connected'}; {op: 'count'} → {op: 'count', received}; {op: 'report'} → {op: 'report', received: number[], histogram:
 * [bucket, n][], cpuMs, loopDelayMaxMs}.
 */
import { connect as tcpConnect } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const HEAD_END = Buffer.from('\r\n\r\n');
const AT = 0x40; // '@'
const DOT = 0x2e;
/** 0.1 ms buckets up to 60 s; later ones land in the last bucket. */
const histogram = new Uint32Array(600_000);
const received = [];
const sockets = [];
const now = () => performance.timeOrigin + performance.now();
const cpuAtStart = process.cpuUsage();
// How late this reader's own event loop ran (a reader that stalls makes the daemon drop its clients).
const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();
/**
 * One read buffer for every socket of this process (`onread`: the bytes are handed to the callback
 * synchronously, without a Buffer per read or the stream's `data` event); what must outlive a read is
 * copied (see `tail`).
 */
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);

function open(url, token, index, connected, skip) {
  received[index] = 0;
  const { hostname, port } = new URL(url);
  let head = true;
  // The start of a frame's timestamp cut by the end of a read, copied for the next one (rare).
  let tail = null;
  const read = (chunk) => {
    const at = now();
    let bytes = tail === null ? chunk : Buffer.concat([tail, chunk]);
    tail = null;
    if (head) {
      const end = bytes.indexOf(HEAD_END);
      if (end < 0) return void (tail = Buffer.from(bytes));
      head = false;
      connected();
      bytes = bytes.subarray(end + HEAD_END.length);
    }
    let position = 0;
    let count = 0;
    for (;;) {
      // `@<ms>.<µs>@` opens each message and is the only `@` in a frame (the rest is JSON of fixed
      // fields, hex chunk sizes and control frames): a one-byte search (memchr), not a pattern search.
      const open = bytes.indexOf(AT, position);
      if (open < 0) break;
      // The digits read as one integer of microseconds (no string made per frame).
      let end = open + 1;
      let micros = 0;
      let digits = 0;
      for (let byte = bytes[end]; byte !== AT && byte !== undefined; byte = bytes[++end]) {
        if (byte !== DOT) (micros = micros * 10 + (byte - 0x30)), digits++;
      }
      if (end >= bytes.length) {
        tail = Buffer.from(bytes.subarray(open));
        break;
      }
      if (digits < 10) throw new Error(`not a timestamp at byte ${open}: ${bytes.toString('latin1', open, end + 1)}`);
      const bucket = Math.round((at * 1000 - micros) / 100);
      histogram[Math.min(histogram.length - 1, Math.max(0, bucket))]++;
      count++;
      // The padding after the timestamp holds no `@`: not scanned.
      position = end + 1 + skip;
    }
    received[index] += count;
  };
  const socket = tcpConnect({
    host: hostname,
    port: Number(port),
    noDelay: true,
    onread: { buffer: READ_BUFFER, callback: (size, buffer) => void read(buffer.subarray(0, size)) },
  });
  socket.write(
    `GET /events HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`,
  );
  socket.on('error', () => {});
  sockets.push(socket);
}

process.on('message', (message) => {
  if (message.op === 'connect') {
    let waiting = message.clients;
    const connected = () => {
      if (--waiting === 0) process.send({ op: 'connected' });
    };
    // Fewer clients than reader processes: this one has none.
    if (waiting === 0) process.send({ op: 'connected' });
    for (let i = 0; i < message.clients; i++) open(message.url, message.token, i, connected, message.skip ?? 0);
  } else if (message.op === 'count') {
    process.send({ op: 'count', received: received.reduce((a, b) => a + b, 0) });
  } else if (message.op === 'report') {
    for (const socket of sockets) socket.destroy();
    const cpu = process.cpuUsage(cpuAtStart);
    const buckets = [];
    for (let i = 0; i < histogram.length; i++) if (histogram[i] > 0) buckets.push([i, histogram[i]]);
    process.send(
      {
        op: 'report',
        received,
        histogram: buckets,
        cpuMs: (cpu.user + cpu.system) / 1000,
        loopDelayMaxMs: loopDelay.max / 1e6,
      },
      () => process.exit(0),
    );
  }
});
process.send({ op: 'ready' });
