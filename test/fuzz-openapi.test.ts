/**
 * Standing schema-driven fuzz test: one daemon (the build, as shipped) with an owner identity and one agent; for every
 * operation of `/openapi.json` (but `POST /daemon/shutdown`), bad inputs generated from its schemas: wrong types,
 * missing and extra fields, huge strings and bodies (over the 1 MB limit), bodies nested 10,000 levels deep, NUL and
 * control characters, non-finite and out-of-range numbers in query strings, traversal and bad encodings in path
 * parameters, bad header values.
 *
 * Asserted: never a 5xx (but the 503 `unavailable` for a subsystem that is off); every 4xx or 503 body is `{error:
 * string, code: string}`; `/health` answers within 1 s after each operation's batch. The generator draws from a
 * fixed-seed PRNG (no Math.random), so a failure reproduces: the seed and the failing cases are printed
 * (`AGT_FUZZ_SEED=<n>` replays another). Operations that could take the fixture away (unload, stop, lock, deletes) run
 * last, and the fixture (agent loaded, identity unlocked) is restored after every operation.
 */
import { copyFileSync, existsSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import t from 'tap';
import { runDaemon, tempDir } from './helpers/daemon.js';

const SEED = Number(process.env.AGT_FUZZ_SEED ?? 20240917);
const PASSPHRASE = 'fuzz owner passphrase';
const REQUEST_FAILSAFE_MS = 15_000;

/** mulberry32: a tiny deterministic PRNG. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick<T>(items: readonly T[]): T {
      return items[Math.floor(next() * items.length)]!;
    },
    sample<T>(items: readonly T[], count: number): T[] {
      const pool = [...items];
      const out: T[] = [];
      while (out.length < count && pool.length > 0) out.push(pool.splice(Math.floor(next() * pool.length), 1)[0]!);
      return out;
    },
  };
}
type Rng = ReturnType<typeof prng>;

type Schema = Record<string, any>;

interface Case {
  label: string;
  method: string;
  /** Raw request target, sent as is (no normalization of `..` or `%2F`). */
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

// --- values ---------------------------------------------------------------------------------------

const CONTROL_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\u0001\u0002\u0003\u001f\u007f',
  'line\nbreak\r\n',
  '\u202Eevil',
  '\u2028',
  '\uFEFF',
  '\uD800',
];
const TRAVERSAL_STRINGS = ['../../../../etc/passwd', '..', '/..', '..\\..\\windows', 'a/../../b', '%2e%2e%2f'];
const HUGE_STRING = 'x'.repeat(200 * 1024);
const WEIRD_NUMBERS = [1e308, -1e308, 2 ** 53 + 2, -(2 ** 53) - 2, -1, 0.5, 0, Number.MAX_SAFE_INTEGER];

/** A nested JSON text 10,000 levels deep, built without recursion. */
function deepJson(levels: number, open: string, close: string, leaf = '1'): string {
  return open.repeat(levels) + leaf + close.repeat(levels);
}

/** Wrong-typed and hostile values for a property of this schema. */
function badValues(schema: Schema, rng: Rng): unknown[] {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const out: unknown[] = [null, {}, [], true];
  if (type !== 'string') out.push('x', '');
  if (type !== 'number' && type !== 'integer') out.push(42);
  if (type === 'string' || type === undefined)
    out.push(...rng.sample(CONTROL_STRINGS, 3), rng.pick(TRAVERSAL_STRINGS), HUGE_STRING, '', ' ');
  if (type === 'number' || type === 'integer') out.push(...rng.sample(WEIRD_NUMBERS, 4), '1e400', 'Infinity');
  if (type === 'array')
    out.push(
      ['\u0000'],
      [null, 1, 'x', {}],
      Array.from({ length: 2000 }, (_, i) => i),
    );
  if (type === 'object') out.push({ '\u0000': 1 }, { a: { b: { c: [] } } });
  return out;
}

/** Candidates tried, in order, for a string schema with a pattern. */
const PATTERN_CANDIDATES = [
  'main',
  'x',
  'a',
  'fuzz',
  'agt-fuzz',
  'provider:fuzz',
  'local',
  'x:y',
  'a-b',
  'A',
  '1',
  'ok.json',
  'src/x.ts:run',
  'did:key:z6Mk',
];

/** A minimal value that satisfies the schema as far as a simple generator can. */
function validValue(schema: Schema | undefined, rng: Rng, depth = 0): unknown {
  if (!schema || depth > 6) return null;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  for (const key of ['anyOf', 'oneOf'] as const)
    if (Array.isArray(schema[key])) return validValue(schema[key][0], rng, depth + 1);
  if (Array.isArray(schema.allOf)) {
    const merged: Record<string, unknown> = {};
    for (const member of schema.allOf) Object.assign(merged, validValue(member, rng, depth + 1) as object);
    return merged;
  }
  const type = Array.isArray(schema.type) ? schema.type.find((item: string) => item !== 'null') : schema.type;
  switch (type) {
    case 'string': {
      if (schema.format === 'date-time') return '2030-01-02T03:04:05Z';
      if (schema.pattern) {
        const pattern = new RegExp(schema.pattern, 'u');
        const found = PATTERN_CANDIDATES.find((candidate) => pattern.test(candidate));
        if (found) return found;
      }
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    }
    case 'integer':
    case 'number':
      return Math.min(Math.max(schema.minimum ?? 1, 1), schema.maximum ?? 1);
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => validValue(schema.items, rng, depth + 1));
    default: {
      if (!schema.properties) return type === 'object' ? {} : null;
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) out[name] = validValue(schema.properties[name], rng, depth + 1);
      return out;
    }
  }
}

/** The object properties of a body schema (allOf members merged). */
function propertiesOf(schema: Schema | undefined): Record<string, Schema> {
  if (!schema) return {};
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map(propertiesOf));
  return schema.properties ?? {};
}

// --- cases ----------------------------------------------------------------------------------------

interface Operation {
  method: string;
  template: string;
  parameters: Array<{ in: string; name: string; schema?: Schema; required?: boolean }>;
  body?: Schema;
}

const PATH_BAD = [
  '..%2F..%2Fetc%2Fpasswd',
  '%00',
  '..',
  '%2e%2e',
  'a%2Fb',
  '%ZZ',
  '%C0%AE%C0%AE',
  'x'.repeat(600),
  'Infinity',
  '1e400',
  '-1',
  '0x10',
  '%20',
  '%E2%80%AE',
  '%0D%0A',
  'nul%00byte',
  '%252e%252e',
];
const QUERY_BAD = [
  '',
  'Infinity',
  '-Infinity',
  '1e400',
  'NaN',
  '0x10',
  '1.5',
  '1e3',
  '%205',
  '-1',
  '99999999999999999999',
  '9007199254740993',
  '%00',
  '%0A',
  '..%2F..',
  '%E2%80%AE',
  'x'.repeat(9000),
];

/**
 * Bad values per path or query parameter and per body property: a sample (from the seed) of the lists above
 * and of badValues(), so every operation, parameter and property meets several kinds of hostile input while
 * the whole run sends ~3,500 requests, not ~5,500. Across the ~150 operations every value of PATH_BAD and
 * QUERY_BAD is sent (counted in `sent`, asserted at the end).
 */
const PER_PARAMETER = 7;
const PER_PROPERTY = 5;
const sent = { path: new Set<string>(), query: new Set<string>() };

function fill(op: Operation, values: Record<string, string>): string {
  return op.template.replace(/\{([^}]+)\}/g, (_, name: string) => values[name] ?? 'x');
}

/** Known-good bodies (by `METHOD template`), so mutations reach past the schema into the handlers. */
type Seeds = Record<string, unknown>;

function casesFor(op: Operation, fixture: { agentId: string }, rng: Rng, seeds: Seeds): Case[] {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const headerParams = op.parameters.filter((p) => p.in === 'header');
  const goodPath: Record<string, string> = {};
  for (const param of pathParams) {
    goodPath[param.name] =
      param.name === 'id' ? fixture.agentId : encodeURIComponent(String(validValue(param.schema, rng) ?? 'x'));
  }
  const goodQuery = queryParams
    .filter((p) => p.required)
    .map((p) => `${p.name}=${encodeURIComponent(String(validValue(p.schema, rng)))}`)
    .join('&');
  const base = fill(op, goodPath);
  const withQuery = (query: string) => (query ? `${base}?${query}` : base);
  const jsonHeaders = { 'content-type': 'application/json' };
  const seed = seeds[`${op.method} ${op.template}`];
  const validObject = seed ?? (op.body ? (validValue(op.body, rng) ?? {}) : undefined);
  const validBody = op.body ? JSON.stringify(validObject) : undefined;
  const cases: Case[] = [];
  const add = (
    label: string,
    path: string,
    body?: string,
    headers: Record<string, string> = body !== undefined ? jsonHeaders : {},
  ) => cases.push({ label, method: op.method, path, body, headers });

  add('as documented (minimal)', withQuery(goodQuery), validBody);
  for (const param of pathParams) {
    for (const bad of rng.sample(PATH_BAD, PER_PARAMETER)) {
      sent.path.add(bad);
      add(
        `path ${param.name}=${bad.slice(0, 30)}`,
        `${fill(op, { ...goodPath, [param.name]: bad })}${goodQuery ? `?${goodQuery}` : ''}`,
        validBody,
      );
    }
  }
  for (const param of queryParams) {
    const others = goodQuery.split('&').filter((part) => part && !part.startsWith(`${param.name}=`));
    for (const bad of rng.sample(QUERY_BAD, PER_PARAMETER)) {
      sent.query.add(bad);
      add(
        `query ${param.name}=${bad.slice(0, 30)}`,
        withQuery([...others, `${param.name}=${bad}`].join('&')),
        validBody,
      );
    }
    add(
      `query ${param.name} repeated`,
      withQuery([...others, `${param.name}=1`, `${param.name}=2`].join('&')),
      validBody,
    );
  }
  add('unknown query parameter', withQuery([goodQuery, 'zz_unknown=%00'].filter(Boolean).join('&')), validBody);
  for (const param of headerParams) {
    for (const bad of ['', 'Infinity', '1e400', '-1', '0x10', 'x'.repeat(8000), '\u00e9\u00e8']) {
      add(`header ${param.name}=${bad.slice(0, 20)}`, withQuery(goodQuery), validBody, {
        ...(validBody !== undefined ? jsonHeaders : {}),
        [param.name]: bad,
      });
    }
  }

  if (op.body) {
    const target = withQuery(goodQuery);
    add('body absent', target, undefined, {});
    add('body absent, typed JSON', target, '', jsonHeaders);
    for (const root of [
      'null',
      '[]',
      '"text"',
      '123',
      'true',
      '{}',
      '{"a":',
      'not json',
      '{"__proto__":{"x":1}}',
      '{"\\u0000":1}',
    ])
      add(`body ${root}`, target, root);
    add('body as text/plain', target, validBody, { 'content-type': 'text/plain' });
    add('body nested 10,000 levels (objects)', target, deepJson(10_000, '{"a":', '}'));
    add('body nested 10,000 levels (arrays)', target, deepJson(10_000, '[', ']'));
    add('body over 1 MB', target, JSON.stringify({ x: 'y'.repeat(1024 * 1024 + 10) }));
    const valid = validObject as Record<string, unknown>;
    if (typeof valid === 'object' && !Array.isArray(valid)) {
      add('extra field', target, JSON.stringify({ ...valid, zz_extra_field: 1 }));
      const props = Object.entries(propertiesOf(op.body));
      for (const [name, schema] of rng.sample(props, 24)) {
        const { [name]: _dropped, ...missing } = valid;
        add(`missing ${name}`, target, JSON.stringify(missing));
        for (const bad of rng.sample(badValues(schema, rng), PER_PROPERTY)) {
          add(`${name}=${JSON.stringify(bad).slice(0, 30)}`, target, JSON.stringify({ ...valid, [name]: bad }));
        }
        add(
          `${name} nested 10,000 levels`,
          target,
          `{${Object.entries(valid)
            .filter(([key]) => key !== name)
            .map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)},`)
            .join('')}${JSON.stringify(name)}:${deepJson(10_000, '[', ']')}}`,
        );
      }
    }
  }
  return cases;
}

/** Printable: TAP output must not carry control or line-separator characters. */
const printable = (text: string) =>
  text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

// --- transport ------------------------------------------------------------------------------------

interface Answer {
  status: number;
  body: unknown;
  text: string;
  stream: boolean;
}

function send(url: string, agent: Agent, token: string, c: Case): Promise<Answer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...c.headers };
    const req = httpRequest(
      { host: target.hostname, port: target.port, method: c.method, path: c.path, headers, agent },
      (res) => {
        if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, body: undefined, text: '', stream: true });
          return;
        }
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body, text, stream: false });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(REQUEST_FAILSAFE_MS, () => req.destroy(new Error(`no answer within ${REQUEST_FAILSAFE_MS} ms`)));
    req.on('error', reject);
    req.end(c.body);
  });
}

/** Runs last: these can take the fixture away (it is restored after each operation anyway). */
const isDisruptive = (op: Operation) =>
  op.method === 'DELETE' || /\/(unload|stop|lock|regenerate|abort|interrupt|state|restore)$/.test(op.template);

t.test(`schema-driven fuzz of every operation (seed ${SEED})`, async (t) => {
  t.comment(`fuzz seed ${SEED} (replay with AGT_FUZZ_SEED=${SEED})`);
  const agentsDir = tempDir(t, 'agt-fuzz-agents-');
  // POST /mcp/packages runs npm: offline, against a closed local port and a cache of its own, so the fuzz
  // never reaches the registry nor writes the machine's npm cache, and npm fails at once (ENOTCACHED)
  // instead of retrying the connection (a third of this file's time before).
  const npmEnv = {
    npm_config_registry: 'http://127.0.0.1:9/',
    npm_config_cache: tempDir(t, 'agt-fuzz-npm-'),
    npm_config_offline: 'true',
  };
  const d = await runDaemon(t, { settings: { agentsFolder: agentsDir }, env: npmEnv });
  t.equal((await d.request('POST', '/identity/create', { passphrase: PASSPHRASE })).status, 201);
  const created = await d.request('POST', '/agents/create', { name: 'Fuzz Target', directory: agentsDir });
  t.equal(created.status, 201, JSON.stringify(created.body));
  const fixture = { agentId: created.body.agentId as string, filePath: created.body.filePath as string };
  // DELETE /agents/{id} removes the file itself: a consistent copy taken now brings it back.
  // Out of the backups folder: POST /backups/run prunes the copies there (settings `backups.keep`).
  const backup = await d.request('POST', `/agents/${fixture.agentId}/backup`, { path: tempDir(t, 'agt-fuzz-copy-') });
  t.equal(backup.status, 200, JSON.stringify(backup.body));
  const spec = (await d.request('GET', '/openapi.json')).body;

  const operations: Operation[] = [];
  for (const [template, item] of Object.entries<Record<string, any>>(spec.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      if (method === 'post' && template === '/daemon/shutdown') continue;
      operations.push({
        method: method.toUpperCase(),
        template,
        parameters: op.parameters ?? [],
        body: op.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  operations.sort((a, b) => Number(isDisruptive(a)) - Number(isDisruptive(b)));
  t.ok(operations.length > 50, `${operations.length} operations`);

  const config = (await d.request('GET', `/agents/${fixture.agentId}/config`)).body.config;
  const seeds: Seeds = {
    'PUT /agents/{id}/config': config,
    'POST /agents/create': { name: 'Fuzz Made', directory: agentsDir },
    'PATCH /settings': { agentsFolder: agentsDir },
    'PUT /agents/{id}/meta/{key}': { value: '1', protection: 'increment' },
    'POST /agents/{id}/timers': { mode: 'once_delay', delay_ms: 3_600_000, payload: 'fuzz' },
    'PUT /agents/{id}/timers/{timerId}': { mode: 'interval', every_ms: 3_600_000 },
    'POST /agents/{id}/loops': { name: 'fuzzloop', goal: 'fuzzing', enabled: false },
    'POST /agents/{id}/chat': { text: 'hello' },
    'POST /agents/{id}/trigger': { type: 'on_inbox', data: { a: 1 } },
    'POST /agents/autostart': { trackedDirs: [agentsDir], maxDepth: 1 },
    'POST /agents/load': { filePath: fixture.filePath },
    'POST /agents/review/accept': { filePath: fixture.filePath },
  };
  const rng = prng(SEED);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());

  const restore = async () => {
    const identity = (await d.request('GET', '/identity')).body;
    if (identity?.status === 'locked') await d.request('POST', '/identity/unlock', { passphrase: PASSPHRASE });
    if ((await d.request('GET', `/agents/${fixture.agentId}`)).status === 404) {
      if (!existsSync(fixture.filePath)) copyFileSync(backup.body.path, fixture.filePath);
      const loaded = await d.request('POST', '/agents/load', { filePath: fixture.filePath });
      if (loaded.status !== 200) throw new Error(`cannot restore the fixture agent: ${JSON.stringify(loaded.body)}`);
    }
  };

  let total = 0;
  const statuses = new Map<number, number>();
  const started = Date.now();
  for (const op of operations) {
    const failures: string[] = [];
    const cases = casesFor(op, fixture, rng, seeds);
    for (const c of cases) {
      total += 1;
      let answer: Answer;
      try {
        answer = await send(d.url, agent, d.token, c);
      } catch (error) {
        failures.push(`${c.label}: ${(error as Error).message}`);
        continue;
      }
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (process.env.AGT_FUZZ_VERBOSE)
        process.stderr.write(
          `${JSON.stringify([answer.status, c.method, c.path.slice(0, 100), c.label, answer.text.slice(0, 160)])}\n`,
        );
      const where = `${c.method} ${c.path.slice(0, 160)} [${c.label}]${c.body !== undefined ? ` body ${c.body.slice(0, 120)}` : ''}`;
      // 503 `unavailable` is the answer for a subsystem this daemon does not run (start by name
      // without tracked-folders); any other 5xx is a defect.
      const unavailable =
        answer.status === 503 && (answer.body as { code?: unknown } | undefined)?.code === 'unavailable';
      if (answer.status >= 500 && !unavailable)
        failures.push(`${where} -> ${answer.status} ${answer.text.slice(0, 300)}`);
      else if (answer.status >= 400) {
        const body = answer.body as { error?: unknown; code?: unknown } | undefined;
        if (!body || typeof body.error !== 'string' || typeof body.code !== 'string')
          failures.push(`${where} -> ${answer.status} not {error, code}: ${answer.text.slice(0, 300)}`);
      }
    }
    const before = Date.now();
    const health = await d.request('GET', '/health');
    const healthMs = Date.now() - before;
    const name = `${op.method} ${op.template}: ${cases.length} cases`;
    if (failures.length > 0) {
      for (const [index, failure] of failures.entries()) failures[index] = printable(failure);
      t.fail(name, { seed: SEED, failures: failures.slice(0, 20), failureCount: failures.length });
      t.comment(`seed ${SEED}, failing cases of ${op.method} ${op.template}:\n  ${failures.slice(0, 20).join('\n  ')}`);
    } else {
      t.pass(name);
    }
    t.ok(
      health.status === 200 && healthMs < 1000,
      `/health answered within 1 s after ${op.method} ${op.template} (${health.status}, ${healthMs} ms)`,
    );
    await restore();
  }
  t.equal(sent.path.size, PATH_BAD.length, 'every bad path value was sent to some path parameter');
  t.equal(sent.query.size, QUERY_BAD.length, 'every bad query value was sent to some query parameter');
  t.comment(
    `${total} requests in ${Date.now() - started} ms; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`,
  );
});
