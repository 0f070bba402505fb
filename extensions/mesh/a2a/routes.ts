/**
 * A2A on the mesh server (docs/mesh.md): `GET /agents/{handle}/.well-known/agent-card.json` (the agent's signed
 * card), `GET /.well-known/agent-card.json` (this daemon: the agents the caller may see), and
 * `POST /agents/{handle}/a2a`, the JSON-RPC binding: v1.0 (`A2A-Version: 1.0`, method names
 * `SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`, `SubscribeToTask`) and, with no
 * `A2A-Version` or `0.3`, v0.3 (`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`,
 * `tasks/resubscribe`) through the official SDK's transport handlers; streams are Server-Sent Events.
 *
 * Before the SDK sees a request it passes what every mesh request passes: the server's guards, the
 * per-address rate, the agent's visibility (404 / 403 / 503), and for a message: its sender proof
 * (sender.ts; 403 when it does not verify), the agent's `messaging.block_list` and a non-empty
 * `messaging.allow_list` (an unsigned caller has no DID, so an allow list shuts it out), and the
 * per-sender and whole-inbox rates (429), answered as `{error, code}` like the inbox.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { parseStrictJson } from '@agt/contracts';
import type { AgentsService, RequestAuth } from '@agt/contracts';
import { meshAgents, type MeshAgent } from '../directory.js';
import { addressRateLimited, badSignature, rateLimited, senderBlocked } from '../errors.js';
import { senderKey } from '../inbound.js';
import { addressBucket, type RateLimiter } from '../rate-limit.js';
import { inScope, scopeOf, visibilityOf } from '../scope.js';
import { a2aUrlOf, buildA2ACard, cardUrlOf, wantsV1 } from './card.js';
import {
  CallerUnauthenticated,
  credentialOf,
  refuseUnauthenticated,
  UNAUTHENTICATED_MESSAGE,
} from './extended-card.js';
import type { Caller } from './handler.js';
import { checkProof } from './sender.js';
import type { TaskBook } from './tasks.js';

export interface A2ARouteDeps {
  agents: AgentsService;
  limiter: RateLimiter;
  addressLimiter: RateLimiter;
  book: TaskBook;
  waitMs: number;
  version: string;
  baseUrl(): string;
  /** Checks the owner's credential for the extended card (`ctx.auth`); absent: the extended card is not offered. */
  auth?: RequestAuth;
  /** The agent `{handle}` names, visible to this requester (else 404 / 403 / 503). */
  visibleAgent(request: FastifyRequest<{ Params: { handle: string } }>): MeshAgent;
}

const Handle = Type.Object({ handle: Type.String({ minLength: 1, maxLength: 200 }) });
const SEND_METHODS = new Set(['SendMessage', 'SendStreamingMessage', 'message/send', 'message/stream']);
const KEEP_ALIVE_MS = 15_000;
const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const dids = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

/** The SDK's server side, loaded on first use (the extension's module stays cheap to import). */
export const sdk = () =>
  Promise.all([
    import('@a2a-js/sdk/server'),
    import('@a2a-js/sdk/compat/v0_3/server'),
    import('@a2a-js/sdk/errors'),
    import('./handler.js'),
  ]).then(([server, compat, errors, handler]) => ({
    server,
    compat,
    errors,
    handler,
  }));

/** Sender proof, block and allow lists, per-sender rate: the checks of a message before it becomes a turn. */
export function checkSender(
  deps: A2ARouteDeps,
  agent: MeshAgent,
  body: Record<string, unknown>,
  owner: string,
): string | undefined {
  const message = record(body.params).message;
  const proof = checkProof(message, agent.did ?? a2aUrlOf(deps.baseUrl(), agent.handle));
  if (proof.status === 'invalid') throw badSignature();
  const did = proof.status === 'valid' ? proof.did : undefined;
  const messaging = record(agent.view.config.messaging);
  if (did && dids(messaging.block_list).includes(did)) throw senderBlocked(did);
  const allow = dids(messaging.allow_list);
  if (allow.length > 0 && (!did || !allow.includes(did))) throw senderBlocked(did ?? 'an unsigned A2A caller');
  const wait = deps.limiter.take(senderKey(did ?? `a2a:${owner}`, agent.view.id));
  if (wait > 0) throw rateLimited(wait);
  return did;
}

export function registerA2ARoutes(app: FastifyInstance, deps: A2ARouteDeps): void {
  app.get('/.well-known/agent-card.json', async (request) => {
    const scope = scopeOf(request.raw.socket.remoteAddress);
    const base = deps.baseUrl();
    const visible = meshAgents(deps.agents).filter(
      (agent) => visibilityOf(agent.view) !== 'off' && inScope(visibilityOf(agent.view), scope),
    );
    const about = (agent: MeshAgent) => agent.view.config.description || agent.view.name;
    return {
      name: 'agt',
      description:
        'The agents of this agt daemon that you may reach; each has its own signed agent card and JSON-RPC URL.',
      version: deps.version,
      supportedInterfaces: [],
      capabilities: { streaming: true },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: visible.map((agent) => ({
        id: agent.handle,
        name: agent.view.name,
        description: about(agent),
        tags: ['agent'],
      })),
      agents: visible.map((agent) => ({
        handle: agent.handle,
        name: agent.view.name,
        description: about(agent),
        did: agent.did ?? null,
        card: cardUrlOf(base, agent.handle),
        url: a2aUrlOf(base, agent.handle),
      })),
    };
  });

  app.get(
    '/agents/:handle/.well-known/agent-card.json',
    { schema: { params: Handle } },
    async (request: FastifyRequest<{ Params: { handle: string } }>, reply) => {
      const shape = wantsV1(request.headers['a2a-version']) ? '1.0' : '0.3';
      const card = await buildA2ACard(deps.agents, deps.visibleAgent(request), deps.baseUrl(), deps.version, {
        shape,
        offersExtended: deps.auth !== undefined,
      });
      reply.header('vary', 'A2A-Version').header('cache-control', 'no-cache');
      return card;
    },
  );

  app.post(
    '/agents/:handle/a2a',
    { schema: { params: Handle } },
    async (request: FastifyRequest<{ Params: { handle: string } }>, reply) => {
      const address = request.raw.socket.remoteAddress ?? '?';
      const wait = deps.addressLimiter.take(address);
      if (wait > 0) throw addressRateLimited(wait);
      const agent = deps.visibleAgent(request);
      const body = typeof request.body === 'string' ? parseStrictJson(request.body) : request.body;
      const rpc = record(body);
      const owner = addressBucket(address);
      const admitted = SEND_METHODS.has(String(rpc.method));
      const caller: Caller = {
        owner,
        did: admitted ? checkSender(deps, agent, rpc, owner) : undefined,
        admitted,
        credential: credentialOf(deps.auth, request.headers.authorization),
      };
      const { server, compat, errors, handler } = await sdk();
      const version = String([request.headers['a2a-version']].flat()[0] ?? '').trim() || '0.3';
      const legacy = /^0\.3(\.\d+)?$/.test(version);
      const mapError = (error: unknown) =>
        legacy
          ? compat.LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(error)
          : server.JsonRpcTransportHandler.mapToJSONRPCError(error);
      const failure = (error: unknown) => ({ jsonrpc: '2.0', id: rpc.id ?? null, error: mapError(error) });
      if (!legacy && !/^1\.0(\.\d+)?$/.test(version))
        return reply.send(
          failure(
            new errors.VersionNotSupportedError(
              `A2A version ${version.slice(0, 20)} is not supported; this server speaks 1.0 and 0.3`,
            ),
          ),
        );
      const closed = new AbortController();
      reply.raw.once('close', () => closed.abort());
      const agentHandler = new handler.AgentA2AHandler(handlerDeps(deps), agent, { ...caller, signal: closed.signal });
      if (rpc.method === (legacy ? 'agent/getAuthenticatedExtendedCard' : 'GetExtendedAgentCard'))
        return extendedCard(reply, rpcId(rpc.id), () => agentHandler.extendedCard(legacy ? '0.3' : '1.0'), failure);
      const transport = legacy
        ? new compat.LegacyJsonRpcTransportHandler(agentHandler)
        : new server.JsonRpcTransportHandler(agentHandler);
      let result: unknown;
      try {
        result = await transport.handle(
          body as Record<string, unknown>,
          new server.ServerCallContext({ requestedVersion: version }),
        );
      } catch (error) {
        return reply.send(failure(error));
      }
      if (!result || typeof (result as AsyncIterable<unknown>)[Symbol.asyncIterator] !== 'function')
        return reply.send(result);
      return stream(reply, (result as AsyncIterable<unknown>)[Symbol.asyncIterator](), failure, closed.signal);
    },
  );
}

/** A JSON-RPC request id as an answer may echo it: a string or a number, else null. */
const rpcId = (id: unknown) => (typeof id === 'string' || typeof id === 'number' ? id : null);

/** What the agent's A2A handler is given of the route's deps. */
export const handlerDeps = (deps: A2ARouteDeps) => ({
  agents: deps.agents,
  book: deps.book,
  waitMs: deps.waitMs,
  version: deps.version,
  baseUrl: deps.baseUrl,
  offersExtended: deps.auth !== undefined,
});

/**
 * Answers the extended card over JSON-RPC as it was signed (the SDK's codecs would rewrite it): without the owner's
 * credential HTTP 401 with `WWW-Authenticate: Bearer` and an `Invalid Request` error (JSON-RPC has no code of its
 * own for it; A2A puts authentication in the HTTP layer).
 */
async function extendedCard(
  reply: FastifyReply,
  id: unknown,
  card: () => Promise<Record<string, unknown>>,
  failure: (error: unknown) => unknown,
) {
  try {
    const result = await card();
    return reply.header('cache-control', 'no-store').send({ jsonrpc: '2.0', id, result });
  } catch (error) {
    if (error instanceof CallerUnauthenticated)
      return refuseUnauthenticated(reply, error.sent, {
        jsonrpc: '2.0',
        id,
        error: { code: -32600, message: UNAUTHENTICATED_MESSAGE },
      });
    return reply.send(failure(error));
  }
}

/** Writes a stream as Server-Sent Events; a failure before the first event is answered by `failure` as plain JSON. */
export async function stream(
  reply: FastifyReply,
  events: AsyncIterator<unknown>,
  failure: (error: unknown) => unknown,
  closed: AbortSignal,
): Promise<void> {
  let first: IteratorResult<unknown>;
  try {
    first = await events.next();
  } catch (error) {
    return void reply.send(failure(error));
  }
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, SSE_HEADERS);
  // A comment line now and then keeps proxies and idle timers from closing a stream of a long turn.
  const keepAlive = setInterval(() => raw.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  try {
    for (let next = first; !next.done && !closed.aborted; next = await events.next())
      raw.write(`data: ${JSON.stringify(next.value)}\n\n`);
  } catch (error) {
    if (!raw.writableEnded) raw.write(`event: error\ndata: ${JSON.stringify(failure(error))}\n\n`);
  } finally {
    clearInterval(keepAlive);
    await events.return?.(undefined);
    raw.end();
  }
}
