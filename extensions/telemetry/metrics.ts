/**
 * `GET /metrics` (Prometheus text, prom-client on its own registry, imported on first use): counters and
 * histograms fed by the kernel's events, gauges read at scrape time. Counting begins at start-up with
 * `telemetry.metrics: true`, else at the first scrape (Prometheus' `rate()` takes a counter that appears
 * at 0), so a daemon nobody scrapes pays nothing.
 */
import type { RuntimeGauges, UmbilicalEvent } from '@agt/contracts';
import type { QueueStats } from './export.js';

type Prom = typeof import('prom-client');

export interface MetricsSources {
  agentName(agentId: string): string;
  loadedAgents(): number;
  /** The kernel's live figures (`ctx.gauges`), read at each scrape; undefined on a kernel without them. */
  gauges(): RuntimeGauges | undefined;
  /** Exporter queue figures while traces are on. */
  queue(): QueueStats | undefined;
  /** The OTLP encoding while traces are exported. */
  protocol(): string | undefined;
}

export class Metrics {
  private constructor(
    private readonly registry: InstanceType<Prom['Registry']>,
    private readonly m: ReturnType<typeof build>,
    private readonly sources: MetricsSources,
  ) {}

  static async create(sources: MetricsSources): Promise<Metrics> {
    const prom: Prom = await import('prom-client');
    const registry = new prom.Registry();
    // Node's own: event-loop delay (nodejs_eventloop_lag_*), heap, handles, CPU.
    prom.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
    // Gauges named like counters (`promtool check metrics` fails on them); `nodejs_active_handles`, `_requests`
    // and `_resources`, by type, say the same.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
      registry.removeSingleMetric(name);
    return new Metrics(registry, build(prom, registry, sources), sources);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    this.m.scrape.gauges = this.sources.gauges();
    return this.registry.metrics();
  }

  observe(event: UmbilicalEvent): void {
    const agent = event.agent_id ? this.sources.agentName(event.agent_id) : '';
    switch (event.event_type) {
      case 'turn.started':
        this.m.turnsStarted.inc({ agent });
        this.m.open.set(turnKey(event), event.timestamp);
        if (this.m.open.size > 10_000) this.m.open.delete(this.m.open.keys().next().value!);
        return;
      case 'turn.completed':
        this.ended(event, agent, 'completed', (event.payload as { turn_id: string }).turn_id);
        return;
      case 'agent.error': {
        const p = event.payload as { turn_id?: string; absorbed_turn_ids?: string[] };
        for (const id of [p.turn_id ?? event.turn_id, ...(p.absorbed_turn_ids ?? [])])
          if (id) this.ended(event, agent, 'error', id);
        return;
      }
      case 'llm.completed': {
        const p = event.payload as {
          provider: string;
          model: string;
          usage: { input: number; output: number };
          cost: number | null;
          duration_ms: number;
        };
        this.m.modelCalls.observe({ agent, provider: p.provider, model: p.model }, p.duration_ms / 1000);
        this.m.tokens.inc({ agent, model: p.model, type: 'input' }, p.usage.input);
        this.m.tokens.inc({ agent, model: p.model, type: 'output' }, p.usage.output);
        if (p.cost !== null) this.m.cost.inc({ agent, model: p.model }, p.cost);
        return;
      }
      case 'tool.completed': {
        const p = event.payload as { tool: string; ok: boolean };
        this.m.tools.inc({ agent, tool: p.tool, ok: String(p.ok) });
        return;
      }
      case 'extension.state.changed': {
        const p = event.payload as { name: string; enabled: boolean; loaded: boolean; error: string | null };
        this.m.extensionStates.set(
          p.name,
          !p.enabled ? 'disabled' : p.error ? 'failed' : p.loaded ? 'loaded' : 'stopped',
        );
        return;
      }
    }
  }

  private ended(event: UmbilicalEvent, agent: string, outcome: string, turnId: string): void {
    const key = `${event.agent_id ?? ''}\n${turnId}`;
    const started = this.m.open.get(key);
    // Only turns seen starting: absorbed chat turns end with the turn that took them.
    if (started === undefined) return;
    this.m.open.delete(key);
    this.m.turnsEnded.inc({ agent, outcome });
    this.m.turnSeconds.observe({ agent, outcome }, Math.max(0, event.timestamp - started) / 1000);
  }
}

const turnKey = (event: UmbilicalEvent) => `${event.agent_id ?? ''}\n${(event.payload as { turn_id: string }).turn_id}`;

function build(prom: Prom, registry: InstanceType<Prom['Registry']>, sources: MetricsSources) {
  const registers = [registry];
  const open = new Map<string, number>();
  const extensionStates = new Map<string, string>();
  const seconds = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
  // One read of the kernel's figures per scrape (taken by text()), shared by the gauges below.
  const scrape: { gauges: RuntimeGauges | undefined } = { gauges: undefined };
  const gauges = () => scrape.gauges;
  new prom.Gauge({
    name: 'agt_agents_loaded',
    help: 'Agents loaded now.',
    registers,
    collect() {
      this.set(gauges()?.agents.length ?? sources.loadedAgents());
    },
  });
  new prom.Gauge({
    name: 'agt_turns_running',
    help: 'Turns started and not yet ended.',
    registers,
    collect() {
      this.set(open.size);
    },
  });
  new prom.Gauge({
    name: 'agt_turns_queued',
    help: "Turns waiting on the agent's loops (queued behind the running one).",
    labelNames: ['agent'],
    registers,
    collect() {
      this.reset();
      for (const agent of gauges()?.agents ?? []) this.set({ agent: agent.name }, agent.queuedTurns);
    },
  });
  new prom.Gauge({
    name: 'agt_sse_clients',
    help: 'Clients connected to GET /events now.',
    registers,
    collect() {
      const now = gauges();
      if (now) this.set(now.sseClients);
    },
  });
  new prom.Gauge({
    name: 'agt_extension_state',
    help: 'Every extension, 1 for its current state (disabled, pending, loaded, started, failed, stopped).',
    labelNames: ['extension', 'state'],
    registers,
    collect() {
      this.reset();
      const now = gauges();
      // Without the kernel's figures (an older or fake kernel): the states changed since counting began.
      const rows = now ? now.extensions.map((row) => [row.name, row.state] as const) : [...extensionStates];
      for (const [extension, state] of rows) this.set({ extension, state }, 1);
    },
  });
  new prom.Gauge({
    name: 'agt_telemetry_traces',
    help: 'Whether traces are exported (1, with the OTLP encoding as label) or not (no sample).',
    labelNames: ['protocol'],
    registers,
    collect() {
      this.reset();
      const protocol = sources.protocol();
      if (protocol) this.set({ protocol }, 1);
    },
  });
  new prom.Gauge({
    name: 'agt_telemetry_spans',
    help: 'Spans of the trace export since traces were turned on: queued (waiting, at most the option maxQueueSize), dropped (the queue was full), exported, failed.',
    labelNames: ['state'],
    registers,
    collect() {
      const stats = sources.queue();
      for (const state of ['queued', 'dropped', 'exported', 'failed'] as const)
        this.set({ state }, stats?.[state] ?? 0);
    },
  });
  return {
    open,
    scrape,
    extensionStates,
    turnsStarted: new prom.Counter({
      name: 'agt_turns_started_total',
      help: 'Turns started.',
      labelNames: ['agent'],
      registers,
    }),
    turnsEnded: new prom.Counter({
      name: 'agt_turns_ended_total',
      help: 'Turns ended, by outcome (completed, error).',
      labelNames: ['agent', 'outcome'],
      registers,
    }),
    turnSeconds: new prom.Histogram({
      name: 'agt_turn_duration_seconds',
      help: 'Turn latency.',
      labelNames: ['agent', 'outcome'],
      buckets: seconds,
      registers,
    }),
    modelCalls: new prom.Histogram({
      name: 'agt_model_call_duration_seconds',
      help: 'Model call latency.',
      labelNames: ['agent', 'provider', 'model'],
      buckets: seconds,
      registers,
    }),
    tokens: new prom.Counter({
      name: 'agt_model_tokens_total',
      help: 'Model tokens, by type (input, output).',
      labelNames: ['agent', 'model', 'type'],
      registers,
    }),
    cost: new prom.Counter({
      name: 'agt_model_cost_usd_total',
      help: 'Model cost in USD as the spend governor priced it.',
      labelNames: ['agent', 'model'],
      registers,
    }),
    tools: new prom.Counter({
      name: 'agt_tool_calls_total',
      help: 'Tool calls ended, by tool and ok.',
      labelNames: ['agent', 'tool', 'ok'],
      registers,
    }),
  };
}
