import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { runDaemon } from './helpers/daemon.js';

t.test('/openapi.json of the daemon as shipped', async (t) => {
  const d = await runDaemon(t);
  const res = await d.request('GET', '/openapi.json');
  t.equal(res.status, 200);
  const doc = res.body;

  t.test('a valid OpenAPI 3.1 document describing every route', async (t) => {
    t.equal(doc.openapi, '3.1.0');
    t.equal(doc.info.version, '0.2.0');
    const validator = new Validator();
    const result = await validator.validate(doc);
    t.same(result.errors ?? [], [], 'no validation errors');
    t.equal(result.valid, true);

    for (const [path, operations] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(operations)) {
        const where = `${method.toUpperCase()} ${path}`;
        t.ok(op.tags?.length, `${where} has a tag`);
        t.ok(op.summary, `${where} has a summary`);
        const success = Object.entries<any>(op.responses ?? {}).filter(([status]) => status.startsWith('2'));
        if (op.responses?.['501']) {
          t.match(op.summary, /^Not implemented/, `${where}: only the 501 placeholders lack a success response`);
          continue;
        }
        t.ok(success.length > 0, `${where} documents a success response`);
        for (const [, response] of success)
          t.ok(response.content || method === 'head', `${where} success has a schema`);
        if (['post', 'put', 'patch'].includes(method) && op.requestBody) {
          t.ok(op.requestBody.content?.['application/json']?.schema, `${where} body has a schema`);
        }
      }
    }
  });

  t.test('every documented GET is a route the daemon serves', async (t) => {
    const gets = Object.entries<any>(doc.paths)
      .filter(([, ops]) => ops.get && !ops.get.responses?.['501'])
      .map(([path]) => path);
    t.ok(gets.length > 20, `${gets.length} GET operations`);
    for (const path of gets) {
      const url = path.replace('{id}', 'someone').replace(/\{\w+\}/g, '1');
      const answer = await fetch(`${d.url}${url}`, { headers: { authorization: `Bearer ${d.token}` } });
      // A stream (GET /events) answers with its headers; its body is not read.
      const text = answer.headers.get('content-type')?.startsWith('text/event-stream') ? '' : await answer.text();
      if (!text) await answer.body?.cancel();
      t.notMatch(text, /"no route /, `GET ${path} is routed (${answer.status})`);
    }
  });
});
