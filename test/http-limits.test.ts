/**
 * Errors raised before routing answer `{error, code}` (431 headers_too_large, 400 bad_request), from the
 * built daemon, over raw `net` sockets so the requests can be as broken as a client can make them. The
 * timeouts (408, idle and keep-alive closes, the event stream that outlives them) are in
 * http-limits-internals.test.ts: they lower the limits, which only a daemon in the test's process can.
 */
import t from 'tap';
import { parseAnswer, rawConnect } from './helpers/raw-http.js';
import { REQUEST_LIMITS } from '../kernel/http/limits.js';
import { runDaemon, type SpawnedDaemon } from './helpers/daemon.js';

t.test('the shipped limits', async (t) => {
  t.same(REQUEST_LIMITS, {
    maxHeaderBytes: 16 * 1024,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 60_000,
    keepAliveTimeoutMs: 5_000,
    idleSocketTimeoutMs: 180_000,
    checkIntervalMs: 1_000,
  });
});

/** One daemon for the file. */
let shared: Promise<SpawnedDaemon> | undefined;
const daemon = () => (shared ??= runDaemon(t));

t.test('headers over 16 KB: 431 headers_too_large with {error, code}', async (t) => {
  const d = await daemon();
  const raw = await rawConnect(d.url);
  raw.socket.write(`GET /health HTTP/1.1\r\nHost: ${new URL(d.url).host}\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`);
  const { text } = await raw.closed;
  const answer = parseAnswer(text);
  t.equal(answer.status, 431);
  t.equal(answer.body.code, 'headers_too_large');
  t.type(answer.body.error, 'string');
  t.match(answer.headers, /content-type: application\/json/);
  t.match(answer.headers, /connection: close/);
  // Just under the limit is fine.
  const ok = await fetch(`${d.url}/health`, { headers: { 'x-big': 'a'.repeat(15 * 1024) } });
  t.equal(ok.status, 200);
});

t.test('a broken request line or header: 400 bad_request with {error, code}', async (t) => {
  const d = await daemon();
  for (const garbage of [
    'GARBAGE\r\n\r\n',
    'GET / HTTP/9.9\r\n\r\n',
    'GET /health HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n',
    '\u0000\u0001\u0002\r\n\r\n',
    'GET /health HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n',
  ]) {
    const raw = await rawConnect(d.url);
    raw.socket.write(garbage);
    const answer = parseAnswer((await raw.closed).text);
    t.equal(answer.status, 400, JSON.stringify(garbage));
    t.same(answer.body, { error: answer.body.error, code: 'bad_request' });
    t.type(answer.body.error, 'string');
  }
  t.equal((await fetch(`${d.url}/health`)).status, 200, 'the daemon is fine');
});
