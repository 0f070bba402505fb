/**
 * Requests for an agent another daemon runs (contracts/agent-placement.ts): a root hook hands a request
 * under `/agents/{id}` whose agent is not loaded here to the agent forwarder, which answers it with the
 * holder's answer; `localRequests` is the holder's side, running a relayed request through this daemon's
 * own API as the owner. A relayed request carries this daemon's relay mark, so it is never relayed again.
 */
import { randomBytes } from 'node:crypto';
import { AgtError, agentForwarder, type LocalRequests, type RelayedAnswer, type RelayedRequest } from '@agt/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ExtensionPoints } from '../extensions/points.js';
import type { KernelApp } from './app.js';

/** Request headers that travel with a relayed request: content negotiation and idempotency, never credentials. */
export const RELAYED_REQUEST_HEADERS = [
  'accept',
  'content-type',
  'idempotency-key',
  'last-event-id',
  'prefer',
] as const;
/** Answer headers that travel back. */
export const RELAYED_ANSWER_HEADERS = [
  'content-type',
  'content-disposition',
  'cache-control',
  'etag',
  'last-modified',
  'location',
  'preference-applied',
  'retry-after',
] as const;

const RELAY_HEADER = 'x-agt-relay';

function pick(headers: Record<string, unknown>, names: readonly string[]): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of names) {
    const value = headers[name];
    if (typeof value === 'string') kept[name] = value;
    else if (typeof value === 'number') kept[name] = String(value);
  }
  return kept;
}

/** The parsed body back as the bytes the route reads (the content type travels with it). */
function bodyBytes(body: unknown): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.from(JSON.stringify(body), 'utf8');
}

export interface ForwardingOptions {
  points: () => ExtensionPoints;
  /** True when `{id}` names an agent loaded here (or several: the local route then answers 409). */
  loadedHere(reference: string): boolean;
}

/** One daemon's relay: the hook that forwards, and the local side that answers. */
export class AgentRelay {
  /** Marks requests this daemon runs for another: random per start, never sent anywhere. */
  private readonly mark = randomBytes(18).toString('base64url');

  constructor(private readonly options: ForwardingOptions) {}

  /** Adds the root `preValidation` hook (before the routes register, so every agent route has it). */
  install(app: KernelApp): void {
    app.addHook('preValidation', async (request, reply) => this.maybeForward(request, reply));
  }

  private async maybeForward(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const route = request.routeOptions.url;
    if (route === undefined || !(route === '/agents/:id' || route.startsWith('/agents/:id/'))) return undefined;
    const reference = (request.params as { id?: unknown } | undefined)?.id;
    if (typeof reference !== 'string' || reference === '') return undefined;
    if (request.headers[RELAY_HEADER] === this.mark) return undefined;
    if (String(request.headers.accept ?? '').includes('text/event-stream')) return undefined;
    const [forwarder] = this.options.points().providers(agentForwarder);
    if (!forwarder || this.options.loadedHere(reference)) return undefined;
    const body = bodyBytes(request.body);
    let answer: RelayedAnswer | undefined;
    try {
      answer = await forwarder.value.forward(reference, {
        method: request.method,
        url: request.url,
        headers: pick(request.headers, RELAYED_REQUEST_HEADERS),
        ...(body ? { body: body.toString('base64') } : {}),
      });
    } catch (error) {
      if (error instanceof AgtError) throw error;
      throw new AgtError('unavailable', `forwarding to the daemon that runs "${reference}" failed`, { cause: error });
    }
    if (!answer) return undefined;
    reply.code(answer.statusCode);
    for (const [name, value] of Object.entries(pick(answer.headers, RELAYED_ANSWER_HEADERS))) reply.header(name, value);
    return reply.send(Buffer.from(answer.body, 'base64'));
  }

  /** `ctx.requests`: runs a relayed request here as the owner, as a remote (never loopback) client. */
  localRequests(app: KernelApp, token: string, port: () => number): LocalRequests {
    return {
      dispatch: async (relayed: RelayedRequest): Promise<RelayedAnswer> => {
        const response = await app.inject({
          method: relayed.method as 'GET',
          url: relayed.url,
          headers: {
            ...pick(relayed.headers, RELAYED_REQUEST_HEADERS),
            host: `127.0.0.1:${port()}`,
            authorization: `Bearer ${token}`,
            [RELAY_HEADER]: this.mark,
            // Another daemon's client is never a local caller: loopback-only routes refuse it.
            'x-forwarded-for': 'fleet',
          },
          ...(relayed.body !== undefined ? { payload: Buffer.from(relayed.body, 'base64') } : {}),
        });
        return {
          statusCode: response.statusCode,
          headers: pick(response.headers, RELAYED_ANSWER_HEADERS),
          body: response.rawPayload.toString('base64'),
        };
      },
    };
  }
}
