/**
 * The request path's logger and serializer, in process: fastify runs without a logger of its
 * own, the kernel's pino is `app.log`, a request's lines carry its request id, 5xx answers are logged,
 * request lines exist only at debug; records serialize without a regular expression per key and to
 * the same bytes.
 */
import { Writable } from 'node:stream';
import t from 'tap';
import { Type } from 'typebox';
import build from 'fast-json-stringify';
import { buildApp } from '../kernel/http/app.js';
import { forSerializing } from '../kernel/http/serializer-schema.js';
import { AgentStatus } from '../kernel/http-api/agents-api.js';
import { AgtError } from '../contracts/errors.js';
import { bearerToken, requestAuth, secretEquals } from '../kernel/http/guards.js';

const guard = { token: 'tok', localProof: 'proof', behindProxy: false, allowedHosts: [], boundPort: () => 0 };

async function appAt(level: string) {
  const lines: Array<Record<string, any>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, any>);
      done();
    },
  });
  const app = await buildApp({ logLevel: level, logFormat: 'json', guard, logDestination: destination });
  app.get('/boom', async () => {
    throw new Error('kaboom');
  });
  app.get('/away', async () => {
    throw new AgtError('unavailable', 'engine away');
  });
  app.get('/fine', async (request) => {
    request.log.info({ note: 1 }, 'from the route');
    return { ok: true };
  });
  app.get(
    '/tables',
    { schema: { response: { 200: Type.Object({ tables: Type.Record(Type.String(), Type.Integer()) }) } } },
    async () => ({ tables: { a: 1, 'b"c': 2 } }),
  );
  const get = (url: string, auth = true) =>
    app.inject({
      method: 'GET',
      url,
      headers: { host: 'localhost', ...(auth ? { authorization: 'Bearer tok' } : {}) },
    });
  return { app, lines, get };
}

t.test('at info: 5xx lines with the request id, route lines, no request lines', async (t) => {
  const { app, lines, get } = await appAt('info');
  t.teardown(() => app.close());
  app.log.info('root line');
  t.match(lines.shift(), { level: 30, msg: 'root line' }, 'app.log is the kernel logger');
  t.notOk('reqId' in (lines[0] ?? {}));
  t.equal((await get('/boom')).statusCode, 500);
  t.match(lines.shift(), {
    level: 50,
    msg: 'unexpected error',
    reqId: /^req-/,
    err: { message: 'kaboom', stack: String },
  });
  t.equal((await get('/away')).statusCode, 503);
  t.match(lines.shift(), {
    level: 40,
    msg: 'request answered 503 unavailable: engine away',
    reqId: /^req-/,
    route: 'GET /away',
  });
  const fine = await get('/fine');
  t.equal(fine.statusCode, 200);
  t.match(lines.shift(), { level: 30, msg: 'from the route', note: 1, reqId: /^req-/ });
  t.equal((await get('/fine', false)).statusCode, 401, 'the guard still runs');
  t.equal((await get('/nowhere')).statusCode, 404);
  t.same(lines, [], 'no line per request at info');
});

t.test('at debug: one line per request, 404 and refusals included', async (t) => {
  const { app, lines, get } = await appAt('debug');
  t.teardown(() => app.close());
  await get('/fine?secret=1');
  await get('/fine', false);
  await get('/nowhere');
  const answered = lines.filter((line) => line.msg === 'request answered');
  t.match(answered, [
    { level: 20, method: 'GET', url: '/fine', statusCode: 200, ms: Number, slow: false, reqId: /^req-/ },
    { url: '/fine', statusCode: 401 },
    { url: '/nowhere', statusCode: 404 },
  ]);
  t.notOk(JSON.stringify(lines).includes('secret'), 'no query string');
});

t.test('records serialize without a pattern test, to the same bytes', async (t) => {
  const record = Type.Record(Type.String(), Type.Integer());
  t.same(forSerializing(record), { type: 'object', additionalProperties: { type: 'integer' } });
  const nested = forSerializing(
    Type.Object({ a: Type.Array(record), b: Type.Optional(Type.Union([record, Type.Null()])) }),
  ) as any;
  t.same(nested.properties.a.items.additionalProperties, { type: 'integer' });
  t.same(nested.properties.b.anyOf[0].additionalProperties, { type: 'integer' });
  const other = { type: 'object', patternProperties: { '^x-': { type: 'string' } } };
  t.same(forSerializing(other), other, 'another pattern stays');
  const withAdditional = {
    type: 'object',
    patternProperties: { '^.*$': { type: 'integer' } },
    additionalProperties: false,
  };
  t.same(forSerializing(withAdditional), withAdditional, 'a schema that says what else is allowed stays');
  const data = { const: { patternProperties: { '^.*$': 1 } } };
  t.same(forSerializing(data), data, 'data keywords are not schemas');

  const tables: Record<string, number> = { agt_config: 1, agt_loop: 40, 'local_"quoted"': 3 };
  const body = {
    id: 'a1',
    filePath: null,
    name: 'n',
    autostart: false,
    runtimeState: 'idle',
    targetState: null,
    loopCount: 40,
    storage: { fileBytes: 1, walBytes: 0, quotaBytes: null, tables },
  };
  t.equal(
    build(forSerializing(AgentStatus) as any)(body),
    build(AgentStatus as any)(body),
    'the status body, byte for byte',
  );

  const { app, get } = await appAt('silent');
  t.teardown(() => app.close());
  t.same(JSON.parse((await get('/tables')).body), { tables: { a: 1, 'b"c': 2 } }, 'through the daemon app');
});

t.test('the guard: bearer token and secret comparison', async (t) => {
  const byRegex = (header: string) => /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim() || undefined;
  for (const header of [
    'Bearer tok',
    'bearer tok',
    'BEARER tok',
    'Bearer  tok ',
    'Bearer\ttok',
    'Bearer ',
    'Bearer',
    'Bearertok',
    'Basic tok',
    'Bearer   ',
    ' Bearer tok',
  ]) {
    t.equal(
      bearerToken(header) || undefined,
      byRegex(header),
      `${JSON.stringify(header)} as the regular expression reads it`,
    );
  }
  t.equal(bearerToken(undefined), undefined);
  for (const [given, expected, same] of [
    ['abc', 'abc', true],
    ['abd', 'abc', false],
    ['ab', 'abc', false],
    ['abcd', 'abc', false],
    ['', 'abc', false],
    ['é', 'é', true],
    ['é', 'e\u0301', false],
    ['x'.repeat(100), 'x'.repeat(43), false],
  ] as const) {
    t.equal(secretEquals(given, expected), same, `${JSON.stringify(given)} against ${JSON.stringify(expected)}`);
  }
  t.equal(secretEquals('abc', 'abc'), true, 'again after a longer value left bytes in the scratch buffer');
  const auth = requestAuth('the-token');
  t.same(auth.verifyBearer('Bearer the-token'), { kind: 'owner' }, 'ctx.auth: the daemon token names the owner');
  t.same(auth.verifyBearer('bearer  the-token'), { kind: 'owner' }, 'in the spellings the guard accepts');
  for (const header of [undefined, 'Bearer the-toke', 'Bearer the-token2', 'Basic the-token', 'the-token', 'Bearer '])
    t.equal(auth.verifyBearer(header), undefined, `ctx.auth refuses ${JSON.stringify(header)}`);
  t.equal(auth.verifyBearer(['Bearer the-token', 'Bearer the-token']), undefined, 'a repeated header is none');
});
