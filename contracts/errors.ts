/**
 * Coded errors shared by the kernel and every extension.
 *
 * Throw an {@link AgtError} anywhere below a route handler; the kernel's single error handler turns it
 * into the `{error, code}` body with the status from {@link ERROR_STATUS} (or the explicit
 * `status` given). Clients branch on `code`, never on the message, so codes are stable API.
 */

/** Every code the kernel knows, with the HTTP status it maps to. Extensions may add their own codes by
 * passing an explicit status.
 *
 * @public
 */
export const ERROR_STATUS = {
  bad_request: 400,
  password_required: 400,
  unauthorized: 401,
  forbidden: 403,
  host_not_allowed: 403,
  cross_origin: 403,
  loopback_only: 403,
  AGENT_REVIEW_REQUIRED: 403,
  wrong_password: 403,
  key_material_refused: 403,
  not_found: 404,
  not_supported: 405,
  request_timeout: 408,
  conflict: 409,
  budget_exceeded: 429,
  ambiguous_agent: 409,
  identity_not_ready: 409,
  name_taken: 409,
  credentials_locked: 409,
  agent_file_in_use: 409,
  agent_id_conflict: 409,
  payload_too_large: 413,
  storage_quota_exceeded: 507,
  work_folder_full: 507,
  template_missing: 422,
  template_unreviewed: 422,
  template_invalid: 422,
  load_failed: 422,
  idempotency_key_reused: 422,
  headers_too_large: 431,
  internal_error: 500,
  not_implemented: 501,
  upstream_error: 502,
  unavailable: 503,
  timeout: 504,
} as const satisfies Record<string, number>;

/** @public */
export type KnownErrorCode = keyof typeof ERROR_STATUS;

/**
 * The code a bare status maps to when a route defines nothing more specific.
 *
 * @public
 */
export const STATUS_DEFAULT_CODE: Record<number, KnownErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'not_supported',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  422: 'load_failed',
  431: 'headers_too_large',
  500: 'internal_error',
  501: 'not_implemented',
  502: 'upstream_error',
  503: 'unavailable',
  504: 'timeout',
};

/** @public */
export interface AgtErrorOptions {
  /** Overrides the status from {@link ERROR_STATUS}; required for codes the kernel does not know. */
  status?: number;
  /** Extra top-level fields of the error body (for example `identity`, `agentId`, `candidates`). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

/**
 * Brand that identifies an AgtError across copies of this module: a third-party extension installed
 * with its own copy of the contracts still throws errors the kernel recognizes.
 */
const AGT_ERROR_BRAND = Symbol.for('agt.contracts.AgtError');

/** @public */
export class AgtError extends Error {
  /** `instanceof AgtError` is true for any copy's AgtError (see the brand above). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[AGT_ERROR_BRAND] === true;
  }

  readonly [AGT_ERROR_BRAND] = true;
  readonly code: string;
  readonly statusCode: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: KnownErrorCode | (string & {}), message: string, options: AgtErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AgtError';
    this.code = code;
    this.statusCode = options.status ?? (ERROR_STATUS as Record<string, number>)[code] ?? 500;
    this.details = options.details;
  }

  /** The error body. `details` never overrides `error` or `code`. */
  toBody(): Record<string, unknown> {
    return { ...this.details, error: this.message, code: this.code };
  }
}

/** @public */
export const isAgtError = (value: unknown): value is AgtError => value instanceof AgtError;

/**
 * Shorthands for the codes used everywhere.
 *
 * @public
 */
export const badRequest = (message: string, details?: Record<string, unknown>) =>
  new AgtError('bad_request', message, { details });
/** @public */
export const notFound = (message: string) => new AgtError('not_found', message);
/** @public */
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new AgtError('conflict', message, { details });
/** @public */
export const unavailable = (message: string) => new AgtError('unavailable', message);
/** @public */
export const notImplemented = (what: string) =>
  new AgtError('not_implemented', `${what} is not implemented in this build`);

/**
 * `code` (default `bad_request`): `what` fails its schema; `problem` is `path: message` of the first bad field.
 *
 * @public
 */
export const invalidValue = (what: string, problem: string, code: string = 'bad_request') =>
  new AgtError(code, `Invalid ${what}: ${problem}`, { details: { path: problem.split(':')[0] } });

/**
 * `code` (default `bad_request`): `what` nests deeper than `maxDepth` containers, first at JSON pointer `at`.
 *
 * @public
 */
export const nestsTooDeep = (what: string, maxDepth: number, at: string, code: string = 'bad_request') =>
  new AgtError(code, `Invalid ${what}: nests deeper than ${maxDepth} levels (at ${at})`, { details: { path: at } });

/**
 * 400 `bad_request`: a stored agent file path that is not relative, "/"-separated and free of "." and ".." segments.
 *
 * @public
 */
export const invalidStoredPath = (path: string) =>
  new AgtError(
    'bad_request',
    `invalid agent file path "${path}": relative, "/"-separated, no empty, "." or ".." segments`,
  );
