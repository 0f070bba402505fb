/**
 * Errors raised before routing answer `{error, code}` (431 headers_too_large, 400 bad_request, 408
 * request_timeout), and half-sent or idle connections are closed by the header, request and idle
 * limits, while an established `GET /events` stream outlives all of them. Raw `net` sockets, so the
 * requests can be as broken as a client can make them. The limits are lowered for this file only.
 */
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { REQUEST_LIMITS } from '../kernel/http/limits.js';
import { bootDaemon, type TestDaemon } from './helpers/daemon.js';
import { openSse } from './helpers/sse-client.js';

const defaults = { ...REQUEST_LIMITS };
t.test('the shipped limits', async (t) => {
  t.same(defaults, {
    maxHeaderBytes: 16 * 1024,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 60_000,
    keepAliveTimeoutMs: 5_000,
    idleSocketTimeoutMs: 180_000,
    checkIntervalMs: 1_000,
  });
});

// Short limits for the rest of this file (read when a daemon is built).
Object.assign(REQUEST_LIMITS, { headersTimeoutMs: 400, requestTimeoutMs: 900, keepAliveTimeoutMs: 300, idleSocketTimeoutMs: 1_200, checkIntervalMs: 100 });

interface RawExchange {
  socket: Socket;
  /** Everything received so far. */
  received: () => string;
  /** Resolves with everything received once the server closed the connection, and how long that took. */
  closed: Promise<{ text: string; ms: number }>;
}

function rawConnect(d: TestDaemon): Promise<RawExchange> {
  const url = new URL(d.url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(Number(url.port), url.hostname, () => {
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk) => (text += chunk));
      const closed = new Promise<{ text: string; ms: number }>((done) => socket.once('close', () => done({ text, ms: Date.now() - started })));
      socket.on('error', () => {});
      resolve({ socket, received: () => text, closed });
    });
    socket.once('error', reject);
  });
}

/** Status line and parsed JSON body of a raw HTTP answer. */
function parseAnswer(text: string): { status: number; body: any; headers: string } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = body;
  }
  return { status, body: parsed, headers: head.toLowerCase() };
}

t.test('headers over 16 KB: 431 headers_too_large with {error, code}', async (t) => {
  const d = await bootDaemon(t);
  const raw = await rawConnect(d);
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
  const d = await bootDaemon(t);
  for (const garbage of ['GARBAGE\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', 'GET /health HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n', '\u0000\u0001\u0002\r\n\r\n', 'GET /health HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n']) {
    const raw = await rawConnect(d);
    raw.socket.write(garbage);
    const answer = parseAnswer((await raw.closed).text);
    t.equal(answer.status, 400, JSON.stringify(garbage));
    t.same(answer.body, { error: answer.body.error, code: 'bad_request' });
    t.type(answer.body.error, 'string');
  }
  t.equal((await fetch(`${d.url}/health`)).status, 200, 'the daemon is fine');
});

t.test('half-sent headers and half-sent bodies are cut with 408 request_timeout', async (t) => {
  const d = await bootDaemon(t);
  const headers = await rawConnect(d);
  headers.socket.write(`GET /health HTTP/1.1\r\nHost: ${new URL(d.url).host}\r\nX-Slow: `);
  const cut = await headers.closed;
  const answer = parseAnswer(cut.text);
  t.equal(answer.status, 408);
  t.same(answer.body, { error: answer.body.error, code: 'request_timeout' });
  t.ok(cut.ms < 3_000, `headers timeout closed the connection after ${cut.ms} ms`);

  const body = await rawConnect(d);
  body.socket.write(`POST /agents/load HTTP/1.1\r\nHost: ${new URL(d.url).host}\r\nAuthorization: Bearer ${d.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"filePath":`);
  const bodyCut = await body.closed;
  t.equal(parseAnswer(bodyCut.text).status, 408);
  t.equal(parseAnswer(bodyCut.text).body.code, 'request_timeout');
  t.ok(bodyCut.ms < 4_000, `request timeout closed the connection after ${bodyCut.ms} ms`);

  const silent = await rawConnect(d);
  const silentCut = await silent.closed;
  t.ok(silentCut.ms < 4_000, `a connection that sends nothing is closed (${silentCut.ms} ms)`);
});

t.test('an idle keep-alive connection is closed after the keep-alive timeout', async (t) => {
  const d = await bootDaemon(t);
  const raw = await rawConnect(d);
  raw.socket.write(`GET /health HTTP/1.1\r\nHost: ${new URL(d.url).host}\r\n\r\n`);
  const { text, ms } = await raw.closed;
  t.match(text, /^HTTP\/1\.1 200/);
  t.ok(ms < 3_000, `closed after ${ms} ms`);
});

t.test('an established event stream outlives the header, request and idle limits', async (t) => {
  const d = await bootDaemon(t);
  const stream = await openSse(`${d.url}/events`, { authorization: `Bearer ${d.token}` });
  t.teardown(() => stream.close());
  t.equal((await stream.nextEvent()).event, 'stream.hello');
  // Longer than every limit above (idle socket 1.2 s, request 0.9 s, headers 0.4 s) with no traffic.
  await sleep(2_500);
  d.daemon.kernel.bus.emit('agent.said', { agentId: null, payload: { text: 'still here' } } as never);
  const frame = await stream.nextEvent();
  t.equal(frame.event, 'agent.said');
  t.equal(frame.data.event.payload.text, 'still here');
  t.equal(d.daemon.kernel.eventStream!.stats().clients, 1);
});
