/** The event stream `GET /events` (docs/events.md). The fan-out itself lives in `events/sse.ts`. */
import { Type } from 'typebox';
import { errorResponses, EVENT_DESCRIPTIONS, AgtError, type EventScope, eventScopes } from '@agt/contracts';
import { ScopeStreams } from '../events/scope-stream.js';
import { planResume } from '../events/resume.js';
import { DECIMAL_NATURAL_PATTERN } from '../http/input-checks.js';
import type { KernelServices } from '../services.js';
import type { KernelRoutes } from './plugin.js';

/** The kernel services this route group uses. */
type Uses = 'bus' | 'eventStream' | 'registry' | 'contributions';

const EventsQuery = Type.Object({
  agentId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 512,
      description:
        "Only this agent's events: a loaded agent's id, handle or name (like `/agents/{id}`), or the id of an agent this daemon emitted events for; 404 otherwise. Control frames are always sent",
    }),
  ),
  since: Type.Optional(
    Type.Integer({ minimum: 0, description: 'Resume after this cursor; wins over Last-Event-ID. Absent: live only' }),
  ),
  epoch: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'The epoch of `stream.hello` the cursor belongs to' }),
  ),
  scope: Type.Optional(
    Type.String({
      pattern: '^[a-z0-9-]{1,64}$',
      description:
        "`local` (default): this daemon's events. Another scope is an extension's (`fleet`: every daemon of the fleet, docs/fleet.md): frames `id: <the scope's cursor>`, `data: {cursor, event, daemon}`, resumed with `since` or Last-Event-ID; 503 when no running extension offers it",
    }),
  ),
});

const EventsHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      pattern: DECIMAL_NATURAL_PATTERN,
      description: 'Resume cursor (what EventSource clients send): a decimal integer',
    }),
  ),
});

const STREAM_DESCRIPTION = [
  'Server-Sent Events. The stream starts with the comment `: connected`, then a `stream.hello` control frame',
  '`{epoch, oldestCursor, latestCursor}`, an optional `stream.gap` `{reason: evicted | epoch_changed, epoch,',
  'requestedCursor, oldestCursor, latestCursor}`, the replay of buffered frames after the resume cursor, then live',
  'frames `id: <cursor>`, `event: <event_type>`, `data: {cursor, event}`; `: heartbeat` every 30 s.',
  'Control frames carry no `id:`. The buffer holds the last 1000 frames of this process, at most 32 MB of them;',
  'a frame over 256 KB is sent (and buffered) as a preview: `truncated: true` on the event and a payload',
  '`{_truncated: true, preview, bytes}` (the first 4 KB of the payload JSON, the original frame size). Event types:',
  Object.entries(EVENT_DESCRIPTIONS)
    .map(([type, text]) => `\`${type}\` (${text})`)
    .join('; '),
].join(' ');

/**
 * The agent id a filtered stream follows: a loaded agent by id, handle or name (409 `ambiguous_agent`
 * as on every agent route), else an id the bus has emitted events for (an agent unloaded since still
 * resumes), else 404.
 */
function streamAgentId(services: Pick<KernelServices, Uses>, given: string): string {
  try {
    return services.registry.resolve(given).id;
  } catch (error) {
    if (error instanceof AgtError && error.code === 'not_found' && services.bus.hasEmittedFor(given)) return given;
    throw error;
  }
}

/** An agent of a wider scope: a loaded one by id, handle or name, else the id as given (it may run elsewhere). */
function scopeAgentId(services: Pick<KernelServices, Uses>, given: string): string {
  try {
    return services.registry.resolve(given).id;
  } catch (error) {
    if (error instanceof AgtError && error.code === 'not_found') return given;
    throw error;
  }
}

/** The first event scope that carries the events of `reference`, an agent not loaded here (a fleet's). */
async function scopeOfAgent(
  services: Pick<KernelServices, Uses>,
  reference: string,
): Promise<{ scope: EventScope; agentId: string } | undefined> {
  for (const { value } of services.contributions.points.providers(eventScopes)) {
    try {
      const agentId = await value.resolveAgent?.(reference);
      if (typeof agentId === 'string' && agentId !== '') return { scope: value, agentId };
    } catch {
      // A scope that cannot answer carries nothing here.
    }
  }
  return undefined;
}

export const eventRoutes: KernelRoutes<Uses> = async (app, { services }) => {
  const hub = services.eventStream;
  const scoped = new ScopeStreams();
  // preClose runs before fastify force-closes the sockets: streams end cleanly and at once, so the
  // 3 s HTTP close deadline is never spent waiting on long-lived responses.
  app.addHook('preClose', async () => {
    scoped.close();
    await hub.close();
  });
  app.addHook('onClose', async () => {
    await hub.close();
  });

  app.get(
    '',
    {
      // A HEAD would open a stream with no body that never ends: only GET is served.
      exposeHeadRoute: false,
      schema: {
        tags: ['Events'],
        summary: 'Event stream (SSE): hello, optional gap, replay after the resume cursor, then live frames',
        description: STREAM_DESCRIPTION,
        querystring: EventsQuery,
        headers: EventsHeaders,
        response: {
          200: {
            description: 'An endless `text/event-stream`',
            content: { 'text/event-stream': { schema: Type.String() } },
          },
          ...errorResponses(404, 409, 503),
        },
      },
    },
    async (request, reply) => {
      const header = request.headers['last-event-id'];
      const scope = request.query.scope;
      if (scope !== undefined && scope !== 'local') {
        const provider = services.contributions.points.providers(eventScopes).find((p) => p.value.name === scope);
        if (!provider)
          throw new AgtError('unavailable', `no running extension offers the event scope "${scope}"`, {
            details: { scope },
          });
        hub.assertOpen();
        const given = request.query.agentId;
        const start = {
          after: request.query.since ?? (header === undefined ? null : Number(header)),
          agentId: given === undefined ? null : scopeAgentId(services, given),
        };
        const headers = reply.getHeaders();
        reply.hijack();
        try {
          await scoped.serve(reply.raw, provider.value, start, headers);
        } catch (error) {
          const refusal =
            error instanceof AgtError ? error : new AgtError('unavailable', `the event scope "${scope}" cannot start`);
          reply.raw.writeHead(refusal.statusCode, { 'content-type': 'application/json; charset=utf-8' });
          reply.raw.end(JSON.stringify(refusal.toBody()));
        }
        return;
      }
      let agentId: string | null = null;
      if (request.query.agentId !== undefined) {
        try {
          agentId = streamAgentId(services, request.query.agentId);
        } catch (error) {
          // An agent another daemon of a fleet runs: its events come through the scope that carries them.
          const elsewhere =
            error instanceof AgtError && error.code === 'not_found'
              ? await scopeOfAgent(services, request.query.agentId)
              : undefined;
          if (!elsewhere) throw error;
          const after = request.query.since ?? (header === undefined ? null : Number(header));
          const headers = reply.getHeaders();
          hub.assertOpen();
          reply.hijack();
          await scoped.serve(reply.raw, elsewhere.scope, { after, agentId: elsewhere.agentId }, headers).catch(() => {
            reply.raw.writeHead(503, { 'content-type': 'application/json; charset=utf-8' });
            reply.raw.end(JSON.stringify(new AgtError('unavailable', 'the event scope cannot start').toBody()));
          });
          return;
        }
      }
      const resume = {
        cursor: request.query.since ?? (header === undefined ? null : Number(header)),
        epoch: request.query.epoch ?? null,
        agentId,
      };
      hub.assertOpen();
      const plan = planResume(services.bus, resume);
      // From here on fastify must not touch the response: the hub owns it until it ends.
      reply.hijack();
      hub.open(reply.raw, resume, plan, reply.getHeaders());
    },
  );
};
