#!/usr/bin/env node
/**
 * SSE readers for the fan-out bench (bench/sse-fanout.ts): `clients` streams on `GET /events`, in a
 * process of their own so that several such processes share the reading (one JS process parsing 100
 * streams at 5,000 events/s each is itself the bottleneck on 2 cores, and then the daemon drops its
 * clients for being slow). Frames are scanned as bytes, never decoded: each event's message starts
 * with `@<emit time in ms>@` (bench/fanout-daemon.mjs); the latency (read time − emit time, same clock)
 * goes into a histogram of 0.1 ms buckets.
 *
 * IPC from the parent: {op: 'connect', url, token, clients} → {op: 'connected'}; {op: 'count'} →
 * {op: 'count', received}; {op: 'report'} → {op: 'report', received: number[], histogram: [bucket, n][]}.
 */
import { request } from 'node:http';

const MARKER = Buffer.from('"message":"@');
const AT = 0x40; // '@'
const histogram = new Map();
const received = [];
const requests = [];
const now = () => performance.timeOrigin + performance.now();

function record(latencyMs) {
  const bucket = Math.max(0, Math.round(latencyMs * 10));
  histogram.set(bucket, (histogram.get(bucket) ?? 0) + 1);
}

function connect(url, token, index, connected) {
  received[index] = 0;
  const req = request(`${url}/events`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
    connected();
    let tail = Buffer.alloc(0);
    res.on('data', (chunk) => {
      const at = now();
      // A marker split across chunks: the unparsed end of the previous chunk is kept (at most ~40 bytes).
      const bytes = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
      let position = 0;
      for (;;) {
        const marker = bytes.indexOf(MARKER, position);
        if (marker < 0) break;
        const start = marker + MARKER.length;
        const end = bytes.indexOf(AT, start);
        if (end < 0) break;
        record(at - Number(bytes.latin1Slice(start, end)));
        received[index]++;
        position = end + 1;
      }
      tail = bytes.subarray(Math.max(position, bytes.length - 40));
    });
  });
  req.on('error', () => {});
  req.end();
  requests.push(req);
}

process.on('message', (message) => {
  if (message.op === 'connect') {
    let waiting = message.clients;
    const connected = () => {
      if (--waiting === 0) process.send({ op: 'connected' });
    };
    for (let i = 0; i < message.clients; i++) connect(message.url, message.token, i, connected);
  } else if (message.op === 'count') {
    process.send({ op: 'count', received: received.reduce((a, b) => a + b, 0) });
  } else if (message.op === 'report') {
    for (const req of requests) req.destroy();
    process.send({ op: 'report', received, histogram: [...histogram] }, () => process.exit(0));
  }
});
process.send({ op: 'ready' });
