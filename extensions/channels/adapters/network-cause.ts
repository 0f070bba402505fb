/**
 * Why a request to a platform did not get an answer, as an operator reads it: the system's code and the
 * address it concerns (`ECONNREFUSED 127.0.0.1:9`, `ENOTFOUND api.telegram.org`, a TLS code such as
 * `CERT_HAS_EXPIRED`), found down the chain of wrapped errors the HTTP clients build (grammy's `HttpError`
 * holds the fetch error in `error`, fetch's holds the socket's in `cause`, a connect to several addresses
 * an `AggregateError`). Undefined when no such code is there (an answer that was an HTTP error, say).
 */
const SYSTEM_CODE =
  /^(E[A-Z0-9]+|UND_ERR_[A-Z_]+|CERT_[A-Z_]+|ERR_TLS_[A-Z_]+|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_[A-Z_]+)$/;

interface Wrapped {
  code?: unknown;
  address?: unknown;
  port?: unknown;
  hostname?: unknown;
  cause?: unknown;
  error?: unknown;
  errors?: unknown;
  message?: unknown;
}

export function networkCause(error: unknown): string | undefined {
  // A code without its address (node-fetch's own wrapper) is the answer only when nothing deeper names one.
  let bare: string | undefined;
  const visit = (value: unknown, depth: number): string | undefined => {
    if (!value || typeof value !== 'object' || depth > 6) return undefined;
    const e = value as Wrapped;
    if (typeof e.code === 'string' && SYSTEM_CODE.test(e.code)) {
      // node-fetch keeps the code but not the socket error: the address is then in its message
      // (`… reason: connect ECONNREFUSED 127.0.0.1:9`).
      const said =
        typeof e.message === 'string' ? new RegExp(`${e.code} ([\\w.:[\\]-]+)`).exec(e.message)?.[1] : undefined;
      const where =
        typeof e.address === 'string'
          ? `${e.address}${typeof e.port === 'number' ? `:${e.port}` : ''}`
          : typeof e.hostname === 'string'
            ? e.hostname
            : (said ?? '');
      if (where) return `${e.code} ${where}`;
      bare ??= e.code;
    }
    for (const inner of [e.error, e.cause, ...(Array.isArray(e.errors) ? e.errors : [])]) {
      const found = visit(inner, depth + 1);
      if (found) return found;
    }
    return undefined;
  };
  return visit(error, 0) ?? bare;
}
