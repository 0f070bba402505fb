/**
 * The logger of each request (`request.log`, `reply.log`), made only when the request logs a line.
 * Fastify's default makes a pino child per request (its bindings, `{reqId}`, serialized to JSON at once):
 * about 1.5% of the busy time of `GET /agents/{id}/status` under load, for a logger that nearly no
 * request uses (request lines are at debug; see RequestLogController in app.ts). This one holds the
 * parent and the bindings and makes the same child the first time a method is called, so a line that is
 * logged reads exactly as before (with its `reqId`).
 */
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';

type Bindings = Record<string, unknown>;
type ChildOptions = Record<string, unknown>;
type LogCall = (...args: unknown[]) => void;

class LazyRequestLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  /** The pino child fastify would have made, made once. */
  private get real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.made?.level ?? (this.options.level as string | undefined) ?? this.parent.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  // Prototype methods (not per-instance arrow functions): nothing is allocated per request but the holder.
  fatal(...args: unknown[]): void {
    (this.real.fatal as LogCall)(...args);
  }

  error(...args: unknown[]): void {
    (this.real.error as LogCall)(...args);
  }

  warn(...args: unknown[]): void {
    (this.real.warn as LogCall)(...args);
  }

  info(...args: unknown[]): void {
    (this.real.info as LogCall)(...args);
  }

  debug(...args: unknown[]): void {
    (this.real.debug as LogCall)(...args);
  }

  trace(...args: unknown[]): void {
    (this.real.trace as LogCall)(...args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }

  isLevelEnabled(level: string): boolean {
    // The parent answers for a child that keeps its level (no child is made to ask).
    const asked = this.made ?? (this.options.level === undefined ? this.parent : this.real);
    return (asked as FastifyBaseLogger & { isLevelEnabled(level: string): boolean }).isLevelEnabled(level);
  }
}

/** fastify's `childLoggerFactory`: a {@link LazyRequestLogger} per request. */
export const lazyRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  new LazyRequestLogger(logger, bindings as Bindings, options as ChildOptions) as unknown as FastifyBaseLogger;
