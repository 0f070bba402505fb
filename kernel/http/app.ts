/** Builds the root fastify instance: TypeBox provider, OpenAPI collection, guards and error mapping. */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RawServerDefault } from 'fastify';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { installErrorHandling } from './error-handler.js';
import { compileValidator } from './validators.js';
import { forSerializing } from './serializer-schema.js';
import { checkRequest, installGuards, type GuardOptions } from './guards.js';
import { serverLimitOptions } from './limits.js';
import { installConnectionCaps, resolveCaps, type ConnectionCaps } from './connection-caps.js';
import { collectOpenApi } from './openapi.js';
import type { AgtError } from '@agt/contracts';
import { routerRefusal } from './errors.js';
import { AGT_VERSION } from '../version.js';
import { createDaemonLogger, DaemonLogController, installRequestLines, RequestLog } from './logger.js';

export type KernelApp = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export const API_VERSION = AGT_VERSION;

export interface AppOptions {
  logLevel: string;
  /** Pretty lines for a person (pino-pretty), or JSON lines; default pretty when stderr is a TTY. */
  logFormat?: 'pretty' | 'json';
  guard: GuardOptions;
  /** JSON log lines go here instead of stderr (tests). */
  logDestination?: NodeJS.WritableStream;
  /** The connection caps the settings give (`server.*`), read on every connection; unset fields take the defaults. */
  connectionCaps?: () => Partial<ConnectionCaps> | undefined;
}

const API_DESCRIPTION = [
  'agt: a headless agent runtime daemon. Every route but GET/HEAD /health needs `Authorization: Bearer <token>`',
  '(the `daemon-token` file in the data directory, or AGT_DAEMON_TOKEN).',
  'Errors are `{error, code}`; clients branch on `code`.',
  '`POST /agents/{id}/chat` and `POST /agents/{id}/trigger` take an `Idempotency-Key` header: a repeat with the',
  'same key and request (per agent, kept 24 h) answers the same 202 and turnId and queues nothing; the same key with',
  'another request answers 422 `idempotency_key_reused`.',
].join(' ');

// Schema compilers, kept for the whole process: every app built here (a test file starts many daemons)
// reuses what an earlier one compiled, keyed by the schema's content (route schemas are often built per
// app, so identity would not match) and, for serializers, by the scope's shared schemas and options.
// A route's validators and serializers are compiled when it first needs them, not at start-up: compiling
// every route's schemas took about 40% of a cold start. (A schema that cannot compile therefore fails its
// route's first request, with a 500 that names it in the log, rather than the start.)
// JSON bodies are typed already: a number where a string belongs is a 400, never silently converted.
// Query strings, params and headers are text on the wire and are coerced to their schema's types.
type SerializerFactory = (
  externalSchemas: unknown,
  options: unknown,
) => (route: { schema?: unknown }) => (data: unknown) => string;
const serializerFactory = (SerializerSelector as unknown as () => SerializerFactory)();
const serializers = new Map<string, ReturnType<SerializerFactory>>();

function serializerCompiler(externalSchemas: unknown, options: unknown): ReturnType<SerializerFactory> {
  const scope = JSON.stringify([externalSchemas, options ?? null]);
  let compile = serializers.get(scope);
  if (compile === undefined) {
    const build = serializerFactory(externalSchemas, options);
    const compiled = new Map<string, (data: unknown) => string>();
    const serializerFor = (route: { schema?: unknown }) => {
      const key = JSON.stringify(route.schema);
      let serialize = compiled.get(key);
      if (serialize === undefined) {
        // Records written without a regular expression per key (serializer-schema.ts).
        serialize = build({ ...route, schema: forSerializing(route.schema) });
        compiled.set(key, serialize);
      }
      return serialize;
    };
    compile = (route) => {
      let serialize: ((data: unknown) => string) | undefined;
      return (data) => (serialize ??= serializerFor(route))(data);
    };
    serializers.set(scope, compile);
  }
  return compile;
}

export async function buildApp(options: AppOptions): Promise<KernelApp> {
  // The kernel's own pino (kernel/http/logger.ts); fastify runs without a logger, so it adds no response
  // listeners, clocks or pino child per request. `app.log` is set to it below.
  const logger = await createDaemonLogger(options.logLevel, options.logFormat, options.logDestination);
  const app = Fastify({
    logger: false,
    // No "incoming request" / "request completed" lines; fastify's other lines through request.log.
    logController: new DaemonLogController(logger),
    // Bodies are small JSON documents; a larger limit is set per route where files travel.
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    // Ids and meta keys may be long (config allows 128-char ids); the router's default cap is 100.
    routerOptions: { maxParamLength: 512 },
    // Errors the router raises before any hook (malformed URL, over-long parameter) still pass the
    // request guard first and answer in the `{error, code}` shape.
    frameworkErrors: (error, request, reply) => {
      let refusal: AgtError;
      try {
        checkRequest(request, options.guard, undefined);
        refusal = routerRefusal(error.message);
      } catch (guardError) {
        refusal = guardError as AgtError;
      }
      void (reply as import('fastify').FastifyReply).status(refusal.statusCode).send(refusal.toBody());
    },
    forceCloseConnections: true,
    // Header size, header/request/idle time limits and the `{error, code}` answer to errors raised
    // before routing (431, 408, 400): kernel/http/limits.ts.
    ...serverLimitOptions(),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // `log` is a plain property of the instance (fastify sets it from its `logger` option; plugin scopes
  // inherit it): the kernel, the extensions' `ctx.logger` and fastify's listen line log through it.
  (app as { log: FastifyBaseLogger }).log = logger as FastifyBaseLogger;

  app.setSchemaController({ compilersFactory: { buildSerializer: serializerCompiler } });
  app.setValidatorCompiler(compileValidator);

  // The OpenAPI document is made by @fastify/swagger on the first GET /openapi.json (kernel/http/openapi.ts).
  collectOpenApi(app, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'agt daemon API', version: API_VERSION, description: API_DESCRIPTION },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      },
      security: [{ bearer: [] }],
    },
    hideUntagged: false,
  });

  installErrorHandling(app);
  // The guard hook, first on every request, also gives it its logger (one hook, not two).
  const level = options.logLevel;
  installGuards(
    app,
    options.guard,
    level === 'silent'
      ? undefined
      : (request, reply) => {
          request.log = reply.log = new RequestLog(logger, request.id);
        },
  );
  installRequestLines(app, level);
  // The main API's own connection budget (kernel/http/connection-caps.ts).
  const caps = options.connectionCaps ?? (() => undefined);
  installConnectionCaps(app.server, () => resolveCaps(caps()));
  return app;
}
