/**
 * The trace context agt's requests to MCP servers carry (docs/observability.md): a traced tool call's W3C
 * `traceparent` (and `tracestate`) in the request's `params._meta`, as SEP-414 puts it, so the server's work
 * joins the turn's trace. The SDK adds its own `progressToken` beside it.
 */
import type { TraceHeaders } from '@agt/contracts';

/** What a request's params carry besides their own fields. */
export type RequestMeta = { _meta?: { traceparent?: string; tracestate?: string; [key: string]: string | undefined } };

/** `params._meta` of a request made for a traced tool call (`ToolContext.trace`); empty when nothing traces it. */
export function requestMeta(trace: (() => TraceHeaders | undefined) | undefined): RequestMeta {
  let headers: TraceHeaders | undefined;
  try {
    headers = trace?.();
  } catch {
    // Tracing never fails a call.
    headers = undefined;
  }
  if (!headers) return {};
  return {
    _meta: { traceparent: headers.traceparent, ...(headers.tracestate ? { tracestate: headers.tracestate } : {}) },
  };
}
