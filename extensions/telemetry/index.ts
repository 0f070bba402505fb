/**
 * The `telemetry` extension (docs/observability.md): OpenTelemetry traces of every turn exported over
 * OTLP/HTTP to settings `telemetry.otlpEndpoint`, and `GET /metrics` in the Prometheus text format.
 *
 * Its prefix is `/metrics`: an extension's routes live under its own prefix and `GET` on the prefix lists
 * the group's resources, here the metrics themselves, behind the daemon's token like every route.
 * `/metrics/otlp-headers` keeps export headers' values sealed (sealed-headers.ts).
 * Spans and metrics come from the kernel's events; trace context crosses daemons through the kernel's
 * `agt.trace-context` point. The OpenTelemetry SDK and prom-client are imported only when turned on, and
 * nothing listens to the bus while both are off.
 */
import { createHash } from 'node:crypto';
import { Type } from 'typebox';
import { defineExtension } from '@agt/contracts';
import { errorResponses } from '@agt/contracts';
import type { Settings } from '@agt/contracts';
import { traceContext } from '@agt/contracts';
import type { Exporting } from './export.js';
import type { Metrics } from './metrics.js';
import { registerSealedHeaderRoutes, sealedHeaders } from './sealed-headers.js';
import type { EventTracer } from './tracer.js';

const TAG = 'Telemetry';

export const TelemetryOptions = Type.Object(
  {
    serviceName: Type.String({
      default: 'agt',
      minLength: 1,
      maxLength: 100,
      description: 'the `service.name` resource attribute of the spans',
    }),
    maxQueueSize: Type.Integer({
      default: 2048,
      minimum: 1,
      maximum: 100_000,
      description: 'ended spans that may wait for export; more are dropped and counted',
    }),
    scheduledDelayMillis: Type.Integer({
      default: 5000,
      minimum: 10,
      maximum: 600_000,
      description: 'how often a batch is sent',
    }),
  },
  { additionalProperties: false },
);

type TelemetrySettings = NonNullable<Settings['telemetry']>;

const digest = (headers: Record<string, string>) =>
  createHash('sha256')
    .update(JSON.stringify(Object.entries(headers).sort()))
    .digest('hex');

export default defineExtension({
  name: 'telemetry',
  version: '1.0.0',
  contract: '1.0',
  prefix: '/metrics',
  routeGroups: [TAG],
  options: TelemetryOptions,
  register(ctx) {
    let traces: { exporting: Exporting; tracer: EventTracer; endpoint: string; protocol: string } | undefined;
    let metrics: Promise<Metrics> | undefined;
    let unsubscribe: (() => void) | undefined;
    let applying = Promise.resolve();
    let stopped = false;
    /** Why traces are not exported although an endpoint is set (a sealed header without a value); never a value. */
    let problem: string | null = null;
    /** Listens for the owner identity's changes while a sealed header cannot be opened, to try again. */
    let awaitingIdentity: (() => void) | undefined;
    const sealed = sealedHeaders(ctx.secrets);
    const names = new Map<string, string>();
    const agentName = (agentId: string) => {
      const found = ctx.agents.list().find((agent) => agent.id === agentId)?.name;
      if (found) names.set(agentId, found);
      return found ?? names.get(agentId) ?? agentId;
    };
    const settings = (): TelemetrySettings => (ctx.settings.current() as Settings).telemetry ?? {};

    const startMetrics = () =>
      (metrics ??= import('./metrics.js').then(({ Metrics }) =>
        Metrics.create({
          agentName,
          loadedAgents: () => ctx.agents.list().length,
          gauges: () => ctx.gauges?.read(),
          queue: () => traces?.exporting.stats,
          protocol: () => traces?.protocol,
        }),
      ));

    /** Listens to the bus only while traces or metrics are on. */
    const listen = () => {
      if (unsubscribe || stopped) return;
      unsubscribe = ctx.bus.subscribe((event) => {
        traces?.tracer.observe(event);
        void metrics?.then((m) => m.observe(event));
      });
    };

    async function apply(wanted: TelemetrySettings): Promise<void> {
      const protocol = wanted.otlpProtocol ?? 'http/protobuf';
      const { headers, unusable } = await exportHeaders(wanted);
      if (unusable && !awaitingIdentity)
        awaitingIdentity = ctx.bus.subscribe((event) => {
          if (event.event_type === 'identity.changed') void reapply();
        });
      else if (!unusable && awaitingIdentity) {
        awaitingIdentity();
        awaitingIdentity = undefined;
      }
      // The header values are part of what makes an exporter new, hashed so the key holds no secret. Without a
      // sealed header's value nothing is sent: the collector would refuse the spans anyway.
      const key = wanted.otlpEndpoint && !unusable ? `${protocol} ${wanted.otlpEndpoint} ${digest(headers)}` : '';
      if (traces?.endpoint === key) {
        problem = unusable;
        return void (wanted.metrics && (await startMetrics()));
      }
      const old = traces;
      let next: typeof traces;
      if (key && !stopped) {
        const [{ startExporting, SpanKind }, { EventTracer }] = await Promise.all([
          import('./export.js'),
          import('./tracer.js'),
        ]);
        const exporting = await startExporting({
          endpoint: wanted.otlpEndpoint!,
          protocol,
          headers,
          serviceName: ctx.config.serviceName,
          serviceVersion: '1.0.0',
          maxQueueSize: ctx.config.maxQueueSize,
          scheduledDelayMillis: ctx.config.scheduledDelayMillis,
        });
        next = {
          exporting,
          endpoint: key,
          protocol,
          tracer: new EventTracer(
            exporting,
            SpanKind,
            {
              agentName,
              agent: (agentId) => ctx.agents.list().find((agent) => agent.id === agentId),
              settings: () => ctx.settings.current() as Settings,
            },
            () => settings().captureContent === true,
          ),
        };
      }
      // Swap first, then let the old exporter flush in the background (a stuck collector must not delay the new one).
      traces = next;
      if (old) {
        old.tracer.close();
        void old.exporting.shutdown();
      }
      if (next) ctx.logger.info({ protocol }, 'telemetry: exporting traces');
      if (wanted.metrics) await startMetrics();
      if (traces || metrics) listen();
      // Said last: a problem gone means the new exporter already sees the events.
      problem = unusable;
    }
    /**
     * The export headers, each value read now from the daemon's environment or the sealed store; a variable that
     * is unset is logged by name and its header not sent, a sealed header without a readable value makes the
     * export `unusable` (why, naming only the header).
     */
    async function exportHeaders(
      wanted: TelemetrySettings,
    ): Promise<{ headers: Record<string, string>; unusable: string | null }> {
      const fromStore = (wanted.otlpHeaders ?? []).filter((h) => !h.valueEnv).map((h) => h.name);
      if (!wanted.otlpEndpoint || fromStore.length === 0) return { headers: envHeaders(wanted), unusable: null };
      const { values, missing, locked } = await sealed.read(fromStore);
      const unusable = locked.length
        ? `the sealed value of OTLP header ${locked.join(', ')} cannot be opened on this daemon (unlock the owner identity): traces are not exported`
        : missing.length
          ? `OTLP header ${missing.join(', ')} has no sealed value (PUT /metrics/otlp-headers/{name}): traces are not exported`
          : null;
      if (unusable) ctx.logger.warn(unusable);
      return { headers: { ...envHeaders(wanted), ...values }, unusable };
    }
    function envHeaders(wanted: TelemetrySettings): Record<string, string> {
      const headers: Record<string, string> = {};
      for (const { name, valueEnv } of wanted.otlpHeaders ?? []) {
        if (!valueEnv) continue;
        const value = ctx.env.get(valueEnv);
        if (value) headers[name] = value;
        else
          ctx.logger.warn(
            { header: name, variable: valueEnv },
            'telemetry: the header variable is not set; header not sent',
          );
      }
      return headers;
    }
    const reapply = () => {
      applying = applying
        .then(() => apply(settings()))
        .catch((error) => ctx.logger.error({ err: error }, 'telemetry: could not apply the settings'));
      return applying;
    };

    ctx.provide(traceContext, {
      outbound: (message) => traces?.tracer.outbound(message),
      inbound: (message) => traces?.tracer.inbound(message),
      toolCall: (call) => traces?.tracer.toolCall(call),
    });

    ctx.http.get(
      '',
      {
        schema: {
          tags: [TAG],
          summary:
            'Metrics in the Prometheus text format (turns, model calls, tokens, cost, tools, agents, event-loop delay)',
          response: {
            200: Type.String({ description: 'Prometheus text exposition format 0.0.4' }),
            ...errorResponses(),
          },
        },
      },
      async (_request, reply) => {
        const m = await startMetrics();
        listen();
        const text = await m.text();
        return reply.type(m.contentType).send(text);
      },
    );

    registerSealedHeaderRoutes(
      ctx.http,
      TAG,
      ctx.secrets,
      () => (settings().otlpHeaders ?? []).filter((h) => !h.valueEnv).map((h) => h.name),
      reapply,
    );

    ctx.settings.onChange(() => void reapply());
    return {
      start: () => reapply(),
      problem: () => problem,
      async stop() {
        stopped = true;
        unsubscribe?.();
        awaitingIdentity?.();
        await applying.catch(() => {});
        const old = traces;
        traces = undefined;
        if (old) {
          old.tracer.close();
          await old.exporting.shutdown();
        }
      },
    };
  },
});
