import t from 'tap';
import { runDaemon } from './helpers/daemon.js';

const d = await runDaemon(t);

t.test('GET and HEAD /health answer without a token', async (t) => {
  const get = await fetch(`${d.url}/health`);
  t.equal(get.status, 200);
  const body = await get.json();
  t.equal(body.status, 'ok');
  t.equal(body.version, '0.2.0');
  const head = await fetch(`${d.url}/health`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(await head.text(), '');
});

t.test('other routes need the bearer token', async (t) => {
  const res = await fetch(`${d.url}/openapi.json`);
  t.equal(res.status, 401);
  t.same(await res.json(), { error: 'missing or wrong bearer token', code: 'unauthorized' });
  const wrong = await fetch(`${d.url}/openapi.json`, { headers: { authorization: 'Bearer nope' } });
  t.equal(wrong.status, 401);
  const ok = await d.request('GET', '/openapi.json');
  t.equal(ok.status, 200);
});
