/** Builds the root fastify instance: TypeBox provider, OpenAPI collection, guards and error mapping. */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type RawServerDefault } from 'fastify';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { installErrorHandling } from './error-handler.js';
import { compileValidator } from './validators.js';
import { checkRequest, installGuards, type GuardOptions } from './guards.js';
import { serverLimitOptions } from './limits.js';
import { collectOpenApi } from './openapi.js';
import type { AgtError } from '../../contracts/errors.js';
import { routerRefusal } from './errors.js';
import { AGT_VERSION } from '../version.js';

export type KernelApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export const API_VERSION = AGT_VERSION;

export interface AppOptions {
  logLevel: string;
  /** Pretty lines for a person (pino-pretty), or JSON lines; default pretty when stderr is a TTY. */
  logFormat?: 'pretty' | 'json';
  guard: GuardOptions;
}

const API_DESCRIPTION = [
  'agt: a headless agent runtime daemon. Every route but GET/HEAD /health needs `Authorization: Bearer <token>`',
  '(the `daemon-token` file in the data directory, or AGT_DAEMON_TOKEN).',
  'Errors are `{error, code}`; clients branch on `code`.',
  '`POST /agents/{id}/chat` and `POST /agents/{id}/trigger` take an `Idempotency-Key` header: a repeat with the',
  'same key (per agent, kept 24 h) answers the same 202 and turnId and queues nothing.',
].join(' ');

// Schema compilers, kept for the whole process: every app built here (a test file starts many daemons)
// reuses what an earlier one compiled, keyed by the schema's content (route schemas are often built per
// app, so identity would not match) and, for serializers, by the scope's shared schemas and options.
// A route's validators and serializers are compiled when it first needs them, not at start-up: compiling
// every route's schemas took about 40% of a cold start. (A schema that cannot compile therefore fails its
// route's first request, with a 500 that names it in the log, rather than the start.)
// JSON bodies are typed already: a number where a string belongs is a 400, never silently converted.
// Query strings, params and headers are text on the wire and are coerced to their schema's types.
type SerializerFactory = (externalSchemas: unknown, options: unknown) => (route: { schema?: unknown }) => (data: unknown) => string;
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
        serialize = build(route);
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

/** A request slower than this is logged at debug (with every 4xx/5xx answer). */
export const SLOW_REQUEST_MS = 500;

/**
 * Fastify's per-request log lines. Its two info lines per request ("incoming request", "request
 * completed") cost ~15% of a small route's CPU and are gone; a request that errored while answering is
 * still logged at error, and at `debug`/`trace` one line names each request (method, path without the
 * query, status, time, and whether it was slow). Fastify's other internal lines (default error handler, stream errors) stay as they were.
 */
class RequestLogController extends LogController {
  private readonly debug: boolean;

  constructor(level: string) {
    super();
    this.debug = level === 'debug' || level === 'trace';
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (error) return super.requestCompleted(error, request, reply, metadata);
    if (!this.debug) return;
    const ms = reply.elapsedTime;
    // Query strings may name files; the path and status say enough about a request.
    const url = request.url.split('?')[0];
    request.log.debug({ method: request.method, url, statusCode: reply.statusCode, ms: Math.round(ms), slow: ms >= SLOW_REQUEST_MS }, 'request answered');
  }
}

/** Where log lines go: stderr (stdout carries only the listening lines), pretty for a person or JSON. */
async function logStream(format: 'pretty' | 'json' | undefined, level: string): Promise<NodeJS.WritableStream> {
  const pretty = format === 'pretty' || (format === undefined && process.stderr.isTTY === true);
  if (!pretty || level === 'silent') return process.stderr;
  // Loaded only for a person at a terminal: the JSON path starts without it.
  const { default: prettyStream } = await import('pino-pretty');
  return prettyStream({
    destination: 2,
    sync: true,
    colorize: process.stderr.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,reqId',
    singleLine: true,
  });
}

export async function buildApp(options: AppOptions): Promise<KernelApp> {
  const stream = await logStream(options.logFormat, options.logLevel);
  const app = Fastify({
    logger: {
      level: options.logLevel,
      stream,
      redact: ['req.headers.authorization', 'req.headers["x-agt-local-proof"]', 'req.headers.cookie'],
    },
    // No "incoming request" / "request completed" lines per request at info (see RequestLogController).
    logController: new RequestLogController(options.logLevel),
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
  installGuards(app, options.guard);
  return app;
}
