/**
 * What an unreachable platform is reported as (extensions/channels/adapters/network-cause.ts): the
 * system's code and the address, found in the errors real clients throw: fetch's `cause`, grammy's
 * `HttpError.error` around node-fetch's `FetchError` (the address only in its message), no such host.
 */
import { createServer } from 'node:net';
import t from 'tap';
import { networkCause } from '../extensions/channels/adapters/network-cause.js';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  await new Promise((done) => server.close(done));
  return port;
}

t.test('refused, no such host, wrapped, or an answer that was no network failure', async (t) => {
  const port = await closedPort();
  const refused = await fetch(`http://127.0.0.1:${port}/`).catch((error: unknown) => error);
  t.equal(networkCause(refused), `ECONNREFUSED 127.0.0.1:${port}`, "fetch's TypeError, the socket error in its cause");
  const missing = await fetch('http://no-such-host.invalid/').catch((error: unknown) => error);
  t.match(networkCause(missing), /^(ENOTFOUND|EAI_AGAIN) no-such-host\.invalid$/, 'a name that does not resolve');

  // grammy wraps node-fetch's FetchError (code kept, address only in the message) in its HttpError.
  const fetchError = Object.assign(
    new Error(
      `request to http://127.0.0.1:${port}/bot123:secret/getMe failed, reason: connect ECONNREFUSED 127.0.0.1:${port}`,
    ),
    { code: 'ECONNREFUSED', errno: 'ECONNREFUSED' },
  );
  const httpError = Object.assign(new Error("Network request for 'getMe' failed!"), { error: fetchError });
  t.equal(networkCause(httpError), `ECONNREFUSED 127.0.0.1:${port}`);
  t.notMatch(String(networkCause(httpError)), /secret/, 'nothing of the URL (where a token may be) is taken');
  const tls = Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' });
  t.equal(networkCause(new Error('fetch failed', { cause: tls })), 'CERT_HAS_EXPIRED');
  t.equal(
    networkCause(
      new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED', address: '::1', port: 9 })]),
    ),
    'ECONNREFUSED ::1:9',
    'a connect to several addresses',
  );
  t.equal(
    networkCause(Object.assign(new Error('Bad Request: chat not found'), { error_code: 400 })),
    undefined,
    'an HTTP answer is no network cause',
  );
});
