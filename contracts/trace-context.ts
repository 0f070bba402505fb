/**
 * Trace context across daemons (docs/observability.md). A kernel-consumed extension point: the `telemetry` extension
 * offers it; a third-party tracer may instead. The kernel asks it for a W3C `traceparent` when it hands an outbox
 * message to a transport (`OutboundEnvelope.traceparent`) and hands it the `traceparent` an inbound message carried
 * (`InboundMessage.traceparent`, `OutsideMessage.traceparent`), so a conversation between two daemons is one trace;
 * and it gives a running tool call's traceparent to the tool (`ToolContext.trace`), so an MCP server it calls joins it.
 * Without a provider nothing is asked and nothing is carried (no cost).
 */
import { createExtensionPoint } from './extension.js';

/**
 * `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>` (W3C Trace Context, version 00).
 *
 * @beta
 */
export const TRACEPARENT_PATTERN = '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$';
const TRACEPARENT = new RegExp(TRACEPARENT_PATTERN);

/**
 * Whether `value` is a well-formed version-00 traceparent with non-zero ids.
 *
 * @beta
 */
export function isTraceparent(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    TRACEPARENT.test(value) &&
    !/^00-0{32}-/.test(value) &&
    !/-0{16}-[0-9a-f]{2}$/.test(value)
  );
}

/** @beta */
export interface OutboundTrace {
  agentId: string;
  /** The outbox row. */
  messageId: number;
  channel: string;
  address: string;
}

/** @beta */
export interface InboundTrace {
  agentId: string;
  /** The inbox row it was committed as (`ctx.inbox.deliver`); absent for a message delivered straight to a turn. */
  messageId?: number;
  /**
   * The turn a message delivered straight to a turn (`ctx.agents.turns.deliver`, A2A) was queued as: it
   * is handed on before that turn can start, so the provider can open the turn in the caller's trace.
   */
  turnId?: string;
  /** The message's `source` (`mesh`, `a2a`, `channel:<type>`). */
  source: string;
  /** Already checked with {@link isTraceparent} by the kernel. */
  traceparent: string;
}

/** @beta */
export interface ToolCallTrace {
  agentId: string;
  /** The turn the call runs in. */
  turnId: string;
  /** The model's id of the call (`tool.started`'s `call_id`). */
  callId: string;
  tool: string;
}

/** @beta */
export interface TraceContext {
  /**
   * The traceparent of the span `message` leaves from (the provider may open a span for the delivery);
   * undefined for none. Synchronous and quick: it runs on the hand-over path; a throw is ignored.
   */
  outbound(message: OutboundTrace): string | undefined;
  /** An inbound message carried `traceparent` (a throw is ignored); the agent's work on it joins that trace. */
  inbound(message: InboundTrace): void;
  /**
   * The traceparent of a running tool call's span (the turn's when the call has none), for what the tool
   * calls outside (`ToolContext.trace`: an MCP request carries it in `params._meta`); undefined when the
   * turn is not traced. Synchronous and quick; a throw is ignored. Optional: a provider without it traces
   * no tool's outside calls.
   */
  toolCall?(call: ToolCallTrace): string | undefined;
}

/**
 * One provider (a second is a load error). Withdrawn when the offering extension stops or fails.
 *
 * @beta
 */
export const traceContext = createExtensionPoint<TraceContext>('agt.trace-context');
