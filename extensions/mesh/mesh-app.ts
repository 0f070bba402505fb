/**
 * The mesh server's fastify app: the one surface meant for other machines. It is built by
 * `ctx.serverGuards` (the main API's Host / Origin / Sec-Fetch-Site guard, header size, header and
 * request time limits, JSON depth limit, by the kernel's own code); instead of the daemon's bearer token
 * it has a body limit (413), requester scope from the socket address only, no CORS, and the
 * `{error, code}` answers. Cards and health name the server by its own address, never the caller's Host.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { parseStrictJson } from '@agt/contracts';
import { AgtError } from '@agt/contracts';
import { notFoundAnswer, sendErrorAnswer } from '@agt/contracts';
import type { AgentsService, InboxService, RequestAuth } from '@agt/contracts';
import type { ServerGuardPolicy, ServerGuards } from '@agt/contracts';
import { buildCard, endpointsOf } from './cards.js';
import { findMeshAgent, meshAgents, type MeshAgent } from './directory.js';
import { Envelope } from './envelope.js';
import { addressRateLimited, tooLarge, unknownMeshAgent } from './errors.js';
import { acceptEnvelope, checkVisible } from './inbound.js';
import type { RateLimiter } from './rate-limit.js';
import { inScope, scopeOf, visibilityOf, type Scope } from './scope.js';
import { serveWebsite } from './website.js';
import { registerA2ARestRoutes } from './a2a/rest.js';
import { registerA2ARoutes } from './a2a/routes.js';
import type { TaskBook } from './a2a/tasks.js';

export interface MeshAppDeps {
  agents: AgentsService;
  inbox: InboxService;
  limiter: RateLimiter;
  learn?(did: string, replyTo: string | undefined): void;
  /** Per requester address, before any signature work. */
  addressLimiter: RateLimiter;
  maxBodyBytes: number;
  apiTimeoutMs: number;
  version: string;
  /** `ctx.serverGuards`: the server is made there. */
  guards: ServerGuards;
  /** Public names and limits of the guard (the server serves web pages: cross-site navigations pass). */
  guardPolicy: Omit<ServerGuardPolicy, 'crossSiteNavigation'>;
  /** The server's own base URL (a configured public name, else the bound address), for cards and health. */
  baseUrl(): string;
  /** A2A (a2a/routes.ts): the tasks of A2A requests, and how long a blocking send waits. */
  a2a?: { book: TaskBook; waitMs: number; auth?: RequestAuth };
}

const scopeOfRequest = (request: FastifyRequest): Scope => scopeOf(request.raw.socket.remoteAddress);

function visibleAgent(deps: MeshAppDeps, request: FastifyRequest<{ Params: { handle: string } }>): MeshAgent {
  const agent = findMeshAgent(deps.agents, request.params.handle);
  if (!agent) throw unknownMeshAgent(request.params.handle);
  checkVisible(agent, scopeOfRequest(request));
  return agent;
}

const Handle = Type.Object({ handle: Type.String({ minLength: 1, maxLength: 200 }) });

export function buildMeshApp(deps: MeshAppDeps): FastifyInstance {
  const app = deps.guards
    .createServer(
      { logger: false, bodyLimit: deps.maxBodyBytes, routerOptions: { maxParamLength: 200 } },
      { ...deps.guardPolicy, crossSiteNavigation: true },
    )
    .withTypeProvider<TypeBoxTypeProvider>();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  // JSON bodies (signed envelopes) are read strictly: a duplicate member name, `1e400` or nesting past
  // MAX_JSON_DEPTH is a 400 here, so a signature is checked over the one value every reader sees.
  // An empty body is none (an A2A HTTP+JSON cancel is a POST without one); `application/a2a+json` is A2A's JSON.
  const strictJson = (
    _request: unknown,
    body: string | Buffer,
    done: (error: Error | null, value?: unknown) => void,
  ) => {
    if (body === '') return done(null, undefined);
    try {
      done(null, parseStrictJson(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  };
  app.addContentTypeParser('application/json', { parseAs: 'string' }, strictJson);
  app.addContentTypeParser('application/a2a+json', { parseAs: 'string' }, strictJson);
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.statusCode === 413 || error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return sendErrorAnswer(tooLarge(deps.maxBodyBytes) as unknown as FastifyError, request, reply);
    if (error instanceof AgtError && error.statusCode === 429)
      reply.header('retry-after', String(error.details?.retryAfter ?? 1));
    return sendErrorAnswer(error, request, reply);
  });
  app.setNotFoundHandler((request, reply) => reply.status(404).send(notFoundAnswer(request)));

  app.get('/health', async () => ({ status: 'ok', service: 'agt-mesh', version: deps.version }));

  app.get('/agents', async (request) => {
    const scope = scopeOfRequest(request);
    const visible = meshAgents(deps.agents).filter((agent) => {
      const visibility = visibilityOf(agent.view);
      return visibility !== 'off' && inScope(visibility, scope);
    });
    return { agents: await Promise.all(visible.map((agent) => buildCard(deps.agents, agent, deps.baseUrl()))) };
  });

  app.get('/agents/:handle/card', { schema: { params: Handle } }, async (request) =>
    buildCard(deps.agents, visibleAgent(deps, request), deps.baseUrl()),
  );

  app.get('/agents/:handle/health', { schema: { params: Handle } }, async (request) => {
    const agent = visibleAgent(deps, request);
    return {
      status: 'ok',
      handle: agent.handle,
      did: agent.did ?? null,
      endpoints: endpointsOf(deps.baseUrl(), agent.handle),
    };
  });

  app.post('/agents/:handle/inbox', { schema: { params: Handle, body: Envelope } }, async (request, reply) => {
    const wait = deps.addressLimiter.take(request.raw.socket.remoteAddress ?? '?');
    if (wait > 0) throw addressRateLimited(wait);
    const agent = visibleAgent(deps, request);
    const accepted = await acceptEnvelope(deps, agent, request.body);
    return reply.status(202).send({ message_id: accepted.messageId, duplicate: accepted.duplicate });
  });

  app.get('/agents/:handle', { schema: { params: Handle } }, async (request, reply) => {
    visibleAgent(deps, request);
    return reply.redirect(`${(request.raw.url ?? '').split('?')[0]}/`, 308);
  });

  if (deps.a2a) {
    const a2a = {
      agents: deps.agents,
      limiter: deps.limiter,
      addressLimiter: deps.addressLimiter,
      book: deps.a2a.book,
      waitMs: deps.a2a.waitMs,
      ...(deps.a2a.auth ? { auth: deps.a2a.auth } : {}),
      version: deps.version,
      baseUrl: deps.baseUrl,
      visibleAgent: (request: FastifyRequest<{ Params: { handle: string } }>) => visibleAgent(deps, request),
    };
    registerA2ARoutes(app as unknown as FastifyInstance, a2a);
    registerA2ARestRoutes(app as unknown as FastifyInstance, a2a);
  }

  const website = async (request: FastifyRequest<{ Params: { handle: string } }>, reply: FastifyReply) =>
    serveWebsite({ agents: deps.agents, apiTimeoutMs: deps.apiTimeoutMs }, visibleAgent(deps, request), request, reply);
  app.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], url: '/agents/:handle/', handler: website });
  app.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], url: '/agents/:handle/*', handler: website });
  return app;
}
