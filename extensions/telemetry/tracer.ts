/**
 * Spans from the kernel's events (GenAI semantic conventions): `invoke_agent <agent>` per turn, `chat <model>`
 * per model call (from `llm.completed`: the provider's system and endpoint, models, usage, finish reason, the
 * vendor's response id, cost from the spend governor),
 * `execute_tool <tool>` per tool call (MCP tools and compute execs are tool calls too), `await_owner <kind>`
 * per approval or ask, `send_message <channel>` / `receive_message <source>` per mesh delivery (the
 * `agt.trace-context` point, which also gives a running tool call's span to the tool: an MCP request's `_meta`).
 * Nothing here reaches into the kernel: events carry the agent, turn and times.
 */
import type { Context, Span, SpanKind as Kind } from '@opentelemetry/api';
import type { AgentView, Settings, UmbilicalEvent } from '@agt/contracts';
import type { InboundTrace, OutboundTrace, ToolCallTrace } from '@agt/contracts';
import type { Exporting } from './export.js';
import { providerAttributes, resolveProvider } from './gen-ai-provider.js';

/** What the tracer reads of the daemon beside the events: agent names, configs and the settings' providers. */
export interface TracerLookup {
  agentName(agentId: string): string;
  agent(agentId: string): AgentView | undefined;
  settings(): Readonly<Settings>;
}

/** Open spans kept at most (turns that never end are closed oldest first beyond this). */
const MAX_OPEN = 5_000;
/** How long a received trace context waits for the agent's next turn to adopt it. */
const ADOPT_MS = 5 * 60_000;
const MAX_CONTENT = 8_000;

type Kinds = typeof Kind;

/** The kernel's stop reasons as GenAI finish reasons. */
const FINISH_REASONS: Record<string, string> = { end: 'stop', tool_use: 'tool_calls', max_tokens: 'length' };

export class EventTracer {
  private readonly turns = new Map<string, { span: Span; agentId: string | null; tool?: Span }>();
  private readonly tools = new Map<string, Span>();
  private readonly waits = new Map<string, Span>();
  /** outbox row → turn id, from `outbox.queued`. */
  private readonly outbox = new Map<string, string>();
  private readonly received = new Map<string, { context: Context; at: number }>();
  /** Trace contexts of messages delivered straight to a turn (A2A), by turn id. */
  private readonly receivedTurns = new Map<string, Context>();

  constructor(
    private readonly exporting: Exporting,
    private readonly kinds: Kinds,
    private readonly lookup: TracerLookup,
    private readonly captureContent: () => boolean,
  ) {}

  observe(event: UmbilicalEvent): void {
    const agentId = event.agent_id;
    const turnId = event.turn_id;
    const at = event.timestamp;
    switch (event.event_type) {
      case 'turn.started': {
        const p = event.payload as { turn_id: string; trigger: string };
        const name = agentId ? this.lookup.agentName(agentId) : 'agt';
        const model = agentId ? this.lookup.agent(agentId)?.config.model : undefined;
        const adopted = this.adoptTurn(p.turn_id) ?? (agentId ? this.adopt(agentId, at) : undefined);
        const span = this.exporting.tracer.startSpan(
          `invoke_agent ${name}`,
          {
            kind: this.kinds.INTERNAL,
            startTime: at,
            attributes: {
              'gen_ai.operation.name': 'invoke_agent',
              'gen_ai.agent.name': name,
              ...(agentId ? { 'gen_ai.agent.id': agentId } : {}),
              ...(model?.provider
                ? {
                    ...providerAttributes(model.provider, this.provider(agentId, model.provider), false),
                    ...(model.model_id ? { 'gen_ai.request.model': model.model_id } : {}),
                  }
                : {}),
              ...conversation(agentId, event.loop),
              'agt.turn.id': p.turn_id,
              'agt.turn.trigger': p.trigger,
              ...(event.loop ? { 'agt.loop': event.loop } : {}),
            },
          },
          adopted,
        );
        this.bounded(this.turns, p.turn_id, { span, agentId }, (old) => old.span.end());
        return;
      }
      case 'turn.completed': {
        const p = event.payload as {
          turn_id: string;
          text: string | null;
          llm_calls: number;
          tool_calls: number;
          stop_reason: string;
        };
        const turn = this.turns.get(p.turn_id);
        if (!turn) return;
        turn.span.setAttributes({
          'agt.turn.llm_calls': p.llm_calls,
          'agt.turn.tool_calls': p.tool_calls,
          'agt.turn.stop_reason': p.stop_reason,
        });
        if (this.captureContent() && p.text)
          turn.span.setAttribute(
            'gen_ai.output.messages',
            JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: p.text.slice(0, MAX_CONTENT) }] }]),
          );
        this.endTurn(p.turn_id, at);
        return;
      }
      case 'agent.error': {
        const p = event.payload as { code: string; message: string; turn_id?: string; absorbed_turn_ids?: string[] };
        for (const id of [p.turn_id ?? turnId, ...(p.absorbed_turn_ids ?? [])]) {
          const turn = id ? this.turns.get(id) : undefined;
          if (!turn) continue;
          turn.span.setAttribute('error.type', p.code);
          turn.span.setStatus({ code: 2, message: p.message.slice(0, 500) });
          this.endTurn(id!, at);
        }
        return;
      }
      case 'llm.completed': {
        const p = event.payload as {
          provider: string;
          model: string;
          usage: { input: number; output: number; cacheRead: number; cacheWrite: number };
          cost: number | null;
          duration_ms: number;
          stop_reason: string;
          response_id?: string;
        };
        const span = this.exporting.tracer.startSpan(
          `chat ${p.model}`,
          {
            kind: this.kinds.CLIENT,
            startTime: at - Math.max(0, p.duration_ms),
            attributes: {
              'gen_ai.operation.name': 'chat',
              ...providerAttributes(p.provider, this.provider(agentId, p.provider), true),
              ...conversation(agentId, event.loop),
              'gen_ai.request.model': p.model,
              'gen_ai.response.model': p.model,
              'gen_ai.usage.input_tokens': p.usage.input,
              'gen_ai.usage.output_tokens': p.usage.output,
              'gen_ai.usage.cache_read.input_tokens': p.usage.cacheRead,
              'gen_ai.usage.cache_creation.input_tokens': p.usage.cacheWrite,
              'gen_ai.response.finish_reasons': [FINISH_REASONS[p.stop_reason] ?? p.stop_reason],
              ...(p.response_id ? { 'gen_ai.response.id': p.response_id } : {}),
              ...(p.cost === null ? {} : { 'agt.usage.cost_usd': p.cost }),
            },
          },
          this.parentOf(turnId),
        );
        span.end(at);
        return;
      }
      case 'tool.started': {
        const p = event.payload as { tool: string; call_id: string; args: unknown };
        const span = this.exporting.tracer.startSpan(
          `execute_tool ${p.tool}`,
          {
            kind: this.kinds.INTERNAL,
            startTime: at,
            attributes: {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': p.tool,
              'gen_ai.tool.call.id': p.call_id,
              'gen_ai.tool.type': toolType(p.tool),
              ...conversation(agentId, event.loop),
              ...(this.captureContent()
                ? { 'gen_ai.tool.call.arguments': JSON.stringify(p.args ?? null).slice(0, MAX_CONTENT) }
                : {}),
            },
          },
          this.parentOf(turnId),
        );
        this.bounded(this.tools, key(agentId, p.call_id), span, (old) => old.end());
        const turn = turnId ? this.turns.get(turnId) : undefined;
        if (turn) turn.tool = span;
        return;
      }
      case 'tool.completed': {
        const p = event.payload as { call_id: string; ok: boolean; error?: string };
        const span = this.tools.get(key(agentId, p.call_id));
        if (!span) return;
        this.tools.delete(key(agentId, p.call_id));
        if (!p.ok) {
          span.setAttribute('error.type', p.error ?? '_OTHER');
          span.setStatus({ code: 2 });
        }
        span.end(at);
        const turn = turnId ? this.turns.get(turnId) : undefined;
        if (turn?.tool === span) turn.tool = undefined;
        return;
      }
      case 'hil.requested': {
        const p = event.payload as { kind: string; taskId?: string; requestId?: string; tool?: string };
        const id = p.taskId ?? p.requestId;
        if (!id) return;
        const span = this.exporting.tracer.startSpan(
          `await_owner ${p.kind}`,
          {
            kind: this.kinds.INTERNAL,
            startTime: at,
            attributes: { 'agt.hil.kind': p.kind, 'agt.hil.id': id, ...(p.tool ? { 'gen_ai.tool.name': p.tool } : {}) },
          },
          this.parentOf(turnId),
        );
        this.bounded(this.waits, key(agentId, id), span, (old) => old.end());
        return;
      }
      case 'hil.resolved': {
        const p = event.payload as { id: string; resolution: string };
        const span = this.waits.get(key(agentId, p.id));
        if (!span) return;
        this.waits.delete(key(agentId, p.id));
        span.setAttribute('agt.hil.resolution', p.resolution);
        span.end(at);
        return;
      }
      case 'outbox.queued': {
        const p = event.payload as { messageId: number };
        if (turnId) this.bounded(this.outbox, key(agentId, String(p.messageId)), turnId, () => {});
        return;
      }
    }
  }

  /** `agt.trace-context`: a span for the hand-over under the sending turn (a root span without one). */
  outbound(message: OutboundTrace): string {
    const turnId = this.outbox.get(key(message.agentId, String(message.messageId)));
    this.outbox.delete(key(message.agentId, String(message.messageId)));
    const span = this.exporting.tracer.startSpan(
      `send_message ${message.channel}`,
      {
        kind: this.kinds.PRODUCER,
        attributes: {
          'gen_ai.operation.name': 'send_message',
          'gen_ai.agent.id': message.agentId,
          'messaging.destination.name': message.address.slice(0, 300),
          'messaging.message.id': String(message.messageId),
        },
      },
      this.parentOf(turnId),
    );
    span.end();
    return traceparentOf(span);
  }

  /** `agt.trace-context`: a running tool call's span (its turn's when it has none), for what the tool calls. */
  toolCall(call: ToolCallTrace): string | undefined {
    const span = this.tools.get(key(call.agentId, call.callId)) ?? this.turns.get(call.turnId)?.span;
    return span ? traceparentOf(span) : undefined;
  }

  /** `agt.trace-context`: the receiving side joins the sender's trace; the agent's next turn goes under it. */
  inbound(message: InboundTrace): void {
    const span = this.exporting.tracer.startSpan(
      `receive_message ${message.source}`,
      {
        kind: this.kinds.CONSUMER,
        attributes: {
          'gen_ai.agent.id': message.agentId,
          ...(message.messageId !== undefined ? { 'messaging.message.id': String(message.messageId) } : {}),
          'messaging.system': message.source,
        },
      },
      this.exporting.remote(message.traceparent),
    );
    span.end();
    // A message queued as a known turn (A2A) parents exactly that turn; an inbox row, the agent's next turn.
    if (message.turnId) this.bounded(this.receivedTurns, message.turnId, this.exporting.under(span), () => {});
    else
      this.bounded(this.received, message.agentId, { context: this.exporting.under(span), at: Date.now() }, () => {});
  }

  /** Ends every open span (the exporter flushes them at shutdown). */
  close(): void {
    for (const span of [...this.tools.values(), ...this.waits.values()]) span.end();
    for (const turn of this.turns.values()) turn.span.end();
    this.tools.clear();
    this.waits.clear();
    this.turns.clear();
  }

  private provider(agentId: string | null, providerId: string) {
    return resolveProvider(agentId ? this.lookup.agent(agentId) : undefined, this.lookup.settings(), providerId);
  }

  private parentOf(turnId: string | undefined): Context | undefined {
    const turn = turnId ? this.turns.get(turnId) : undefined;
    if (!turn) return undefined;
    return this.exporting.under(turn.tool ?? turn.span);
  }

  private adoptTurn(turnId: string): Context | undefined {
    const context = this.receivedTurns.get(turnId);
    this.receivedTurns.delete(turnId);
    return context;
  }

  private adopt(agentId: string, at: number): Context | undefined {
    const waiting = this.received.get(agentId);
    if (!waiting) return undefined;
    this.received.delete(agentId);
    return at - waiting.at <= ADOPT_MS ? waiting.context : undefined;
  }

  private endTurn(turnId: string, at: number): void {
    const turn = this.turns.get(turnId);
    if (!turn) return;
    this.turns.delete(turnId);
    turn.span.end(at);
  }

  private bounded<V>(map: Map<string, V>, id: string, value: V, evict: (old: V) => void): void {
    map.set(id, value);
    if (map.size <= MAX_OPEN) return;
    const [oldest, old] = map.entries().next().value as [string, V];
    map.delete(oldest);
    evict(old);
  }
}

/** A span's W3C traceparent (version 00). */
function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

const key = (agentId: string | null, id: string) => `${agentId ?? ''}\n${id}`;

/** `gen_ai.conversation.id`: the agent's loop, the history its turns share (`<agent id>/<loop>`; no loop is `main`). */
const conversation = (agentId: string | null, loop: string | undefined): Record<string, string> =>
  agentId ? { 'gen_ai.conversation.id': `${agentId}/${loop ?? 'main'}` } : {};

/**
 * `gen_ai.tool.type`: an MCP server's tool (`mcp_<server>_<tool>`) reaches an outside system (`extension`);
 * every other tool is a function the daemon runs with the model's arguments (`function`).
 */
const toolType = (tool: string) => (tool.startsWith('mcp_') ? 'extension' : 'function');
