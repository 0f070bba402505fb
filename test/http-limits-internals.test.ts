/**
 * The header, request and idle limits close half-sent or idle connections (408 request_timeout with
 * `{error, code}`), while an established `GET /events` stream outlives all of them. In process: the limits
 * are lowered for this file (the server reads them when it is built), so each close takes well under a
 * second instead of the shipped 5-180 s.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { parseAnswer, rawConnect } from './helpers/raw-http.js';
import { REQUEST_LIMITS } from '../kernel/http/limits.js';
import { bootDaemon } from './helpers/daemon.js';
import { openSse } from './helpers/sse-client.js';

Object.assign(REQUEST_LIMITS, {
  headersTimeoutMs: 400,
  requestTimeoutMs: 900,
  keepAliveTimeoutMs: 300,
  idleSocketTimeoutMs: 1_200,
  checkIntervalMs: 100,
});

t.test('half-sent headers and half-sent bodies are cut with 408 request_timeout', async (t) => {
  const d = await bootDaemon(t);
  const headers = await rawConnect(d.url);
  headers.socket.write(`GET /health HTTP/1.1\r\nHost: ${new URL(d.url).host}\r\nX-Slow: `);
  const cut = await headers.closed;
  const answer = parseAnswer(cut.text);
  t.equal(answer.status, 408);
  t.same(answer.body, { error: answer.body.error, code: 'request_timeout' });
  t.ok(cut.ms < 3_000, `headers timeout closed the connection after ${cut.ms} ms`);

  const body = await rawConnect(d.url);
  body.socket.write(
    `POST /agents/load HTTP/1.1\r\nHost: ${new URL(d.url).host}\r\nAuthorization: Bearer ${d.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"filePath":`,
  );
  const bodyCut = await body.closed;
  t.equal(parseAnswer(bodyCut.text).status, 408);
  t.equal(parseAnswer(bodyCut.text).body.code, 'request_timeout');
  t.ok(bodyCut.ms < 4_000, `request timeout closed the connection after ${bodyCut.ms} ms`);

  const silent = await rawConnect(d.url);
  const silentCut = await silent.closed;
  t.ok(silentCut.ms < 4_000, `a connection that sends nothing is closed (${silentCut.ms} ms)`);
});

t.test('an idle keep-alive connection is closed after the keep-alive timeout', async (t) => {
  const d = await bootDaemon(t);
  const raw = await rawConnect(d.url);
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
