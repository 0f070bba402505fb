import t from 'tap';
import { runDaemon } from './helpers/daemon.js';

const d = await runDaemon(t);

t.test('unparseable bodies get the framework shape, before the route runs', async (t) => {
  const empty = await d.request('POST', '/daemon/shutdown', '', { 'content-type': 'application/json' });
  t.equal(empty.status, 400);
  t.same(Object.keys(empty.body).sort(), ['code', 'error', 'message', 'statusCode']);
  t.equal(empty.body.code, 'FST_ERR_CTP_EMPTY_JSON_BODY');
  t.equal(empty.body.error, 'Bad Request');
  const malformed = await d.request('POST', '/daemon/shutdown', '{"a":', { 'content-type': 'application/json' });
  t.equal(malformed.status, 400);
  t.equal(malformed.body.statusCode, 400);
  t.equal(malformed.body.error, 'Bad Request');
  t.type(malformed.body.message, 'string');
  const health = await d.request('GET', '/health');
  t.equal(health.status, 200, 'the daemon did not shut down: the route never ran');
});

t.test('unknown routes: 401 without token, 404 {error, code} with it', async (t) => {
  const anonymous = await fetch(`${d.url}/no/such/route`);
  t.equal(anonymous.status, 401);
  const res = await d.request('GET', '/no/such/route');
  t.equal(res.status, 404);
  t.equal(res.body.code, 'not_found');
  t.type(res.body.error, 'string');
});

t.test('JSON bodies are not type-coerced; query strings are', async (t) => {
  const coerced = await d.request('POST', '/identity/create', { passphrase: 123456789012 });
  t.equal(coerced.status, 400, 'a number where the schema wants a string is refused, not converted');
  t.equal(coerced.body.code, 'bad_request');
  t.equal((await d.request('GET', '/identity')).body.status, 'none', 'nothing was created');
  const query = await d.request('GET', '/events?since=abc');
  t.equal(query.status, 400);
});
