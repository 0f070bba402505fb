import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { bootDaemon } from './helpers/daemon.js';

t.test('GET /openapi.json is a valid OpenAPI 3.1 document describing every route', async (t) => {
  const d = await bootDaemon(t, { extensions: 'default' });
  const res = await d.request('GET', '/openapi.json');
  t.equal(res.status, 200);
  const doc = res.body;
  t.equal(doc.openapi, '3.1.0');
  t.equal(doc.info.version, '0.2.0');
  const validator = new Validator();
  const result = await validator.validate(doc);
  t.same(result.errors ?? [], [], 'no validation errors');
  t.equal(result.valid, true);

  const routes = d.daemon.app.printRoutes({ commonPrefix: false });
  t.ok(routes.length > 0);
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
      for (const [, response] of success) t.ok(response.content || method === 'head', `${where} success has a schema`);
      if (['post', 'put', 'patch'].includes(method) && op.requestBody) {
        t.ok(op.requestBody.content?.['application/json']?.schema, `${where} body has a schema`);
      }
    }
  }
});

t.test('spec routes this build does not serve answer 501 not_implemented', async (t) => {
  const d = await bootDaemon(t);
  const doc = (await d.request('GET', '/openapi.json')).body;
  const placeholders = Object.entries<any>(doc.paths).flatMap(([path, ops]) =>
    Object.entries<any>(ops).filter(([, op]) => op.responses?.['501']).map(([method]) => [method.toUpperCase(), path]),
  );
  for (const [method, path] of placeholders) {
    const url = path!.replace('{id}', 'someone').replace(/\{\w+\}/g, '1');
    const res = await d.request(method!, url, method === 'GET' || method === 'DELETE' ? undefined : {});
    t.equal(res.status, 501, `${method} ${path}`);
    t.equal(res.body.code, 'not_implemented');
  }
});
