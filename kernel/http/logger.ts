/**
 * The daemon's logger, kept by the kernel rather than by fastify. Fastify runs with
 * `logger: false`: as soon as any logger is set, fastify makes a pino child per request and adds
 * `finish`/`error` listeners and two clocks to every response (~2 µs of a ~30 µs `/health`). The kernel
 * keeps every line it logged before:
 *
 * - `app.log` is this pino logger (the kernel and the extensions' `ctx.logger` log through it);
 * - `request.log` and `reply.log` are a {@link RequestLog}, set by the root guard hook on every
 *   request (guards.ts), that makes the pino child with the request id only when something logs: the
 *   error handler's 5xx lines (contracts/error-answers.ts), fastify's own lines (through
 *   {@link DaemonLogController}) and any route's;
 * - at `debug`/`trace` one line per request (`request answered`), from an `onResponse` hook added only
 *   at those levels (the hook makes fastify time the response).
 */
import {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { pino, stdSerializers, type Logger } from 'pino';

/** A request slower than this is logged at debug with `slow: true`. */
export const SLOW_REQUEST_MS = 500;

/** fastify's own serializers (lib/logger-pino.js), so `{req}`, `{res}` and `{err}` print as they did. */
const serializers = {
  req: (req: FastifyRequest) => ({
    method: req.method,
    url: req.url,
    version: req.headers?.['accept-version'],
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket ? req.socket.remotePort : undefined,
  }),
  res: (reply: { statusCode: number }) => ({ statusCode: reply.statusCode }),
  err: stdSerializers.err,
};

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

/** `destination`: where JSON lines go instead of stderr (tests read them). */
export async function createDaemonLogger(
  level: string,
  format?: 'pretty' | 'json',
  destination?: NodeJS.WritableStream,
): Promise<Logger> {
  return pino(
    {
      level,
      serializers,
      redact: ['req.headers.authorization', 'req.headers["x-agt-local-proof"]', 'req.headers.cookie'],
    },
    destination ?? (await logStream(format, level)),
  );
}

/**
 * A request's logger: the pino child with `reqId` (fastify's label) made at the first line logged,
 * so a request that logs nothing costs one small object.
 */
export class RequestLog implements FastifyBaseLogger {
  private child_: FastifyBaseLogger | undefined;

  constructor(
    private readonly root: Logger,
    private readonly reqId: string,
  ) {}

  private get log(): FastifyBaseLogger {
    return (this.child_ ??= this.root.child({ reqId: this.reqId }) as FastifyBaseLogger);
  }

  get level(): string {
    return this.child_?.level ?? this.root.level;
  }

  set level(level: string) {
    this.log.level = level;
  }

  // Prototype methods (not per-instance arrow functions): a request that logs nothing allocates no closures.
  fatal(...args: unknown[]): void {
    (this.log.fatal as (...a: unknown[]) => void)(...args);
  }
  error(...args: unknown[]): void {
    (this.log.error as (...a: unknown[]) => void)(...args);
  }
  warn(...args: unknown[]): void {
    (this.log.warn as (...a: unknown[]) => void)(...args);
  }
  info(...args: unknown[]): void {
    (this.log.info as (...a: unknown[]) => void)(...args);
  }
  debug(...args: unknown[]): void {
    (this.log.debug as (...a: unknown[]) => void)(...args);
  }
  trace(...args: unknown[]): void {
    (this.log.trace as (...a: unknown[]) => void)(...args);
  }
  silent(): void {}

  isLevelEnabled(level: string): boolean {
    return this.root.isLevelEnabled(level);
  }

  child(...args: Parameters<FastifyBaseLogger['child']>): FastifyBaseLogger {
    return this.log.child(...args);
  }
}

/**
 * Fastify's per-request lines, kept as they were: no "incoming request" / "request completed" lines
 * (two info lines per request cost ~15% of a small route's CPU); a response that errored while being
 * written, a stream error, a failed serializer: logged through the request's logger as fastify does.
 * The 503 answered while closing has no request logger: it goes to the daemon's.
 */
export class DaemonLogController extends LogController {
  constructor(private readonly logger: Logger) {
    super();
  }

  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    if (error) super.requestCompleted(error, request, reply, metadata);
  }

  override serviceUnavailable(): void {
    this.logger.info(
      { res: { statusCode: 503 } },
      'request aborted - refusing to accept new requests as server is closing',
    );
  }
}

/** At `debug`/`trace`: one line per request (method, path without the query, status, time, slow). */
export function installRequestLines(app: FastifyInstance, level: string): void {
  if (level !== 'debug' && level !== 'trace') return;
  app.addHook('onResponse', (request, reply, done) => {
    const ms = reply.elapsedTime;
    // Query strings may name files; the path and status say enough about a request.
    const url = request.url.split('?')[0];
    request.log.debug(
      { method: request.method, url, statusCode: reply.statusCode, ms: Math.round(ms), slow: ms >= SLOW_REQUEST_MS },
      'request answered',
    );
    done();
  });
}
