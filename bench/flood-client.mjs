#!/usr/bin/env node
/**
 * One flooding client of bench/connection-flood.ts: opens `count` idle TCP connections to `port` from
 * `localAddress` (no byte sent) and reports over IPC, every 500 ms, how many are open and how many are
 * still connecting; keeps them until told to stop. A connection the kernel completed but the server has
 * not accepted yet counts as open until the server closes it, so the parent waits for the figure to settle.
 * argv: port localAddress count. IPC: sends {op: 'held', open, connecting, closed}; {op: 'stop'} ends it.
 */
import { connect } from 'node:net';

const [port, localAddress, count] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4])];
const sockets = [];
let connecting = count;
let closed = 0;
for (let i = 0; i < count; i++) {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  let pending = true;
  const settled = () => {
    if (pending) {
      pending = false;
      connecting--;
    }
  };
  socket.on('connect', settled);
  socket.on('close', () => {
    settled();
    closed++;
  });
  socket.on('error', () => {});
  sockets.push(socket);
}
const report = setInterval(
  () =>
    process.send({
      op: 'held',
      open: sockets.filter((socket) => !socket.destroyed && !socket.connecting).length,
      connecting,
      closed,
    }),
  500,
);
process.on('message', (message) => {
  if (message.op !== 'stop') return;
  clearInterval(report);
  for (const socket of sockets) socket.destroy();
  process.exit(0);
});
