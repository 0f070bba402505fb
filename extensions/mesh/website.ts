/**
 * Agent websites: `/agents/{handle}/...` serves the agent's stored files under `public/` with their
 * content types and validators (ETag, Last-Modified, `Cache-Control: no-cache`, so a changed file shows
 * at once and an unchanged one costs a 304), and the agent's `serving.api` routes run its lambda in the
 * kernel's sandbox with a time limit, answering the lambda's `{status, headers, body}`.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AgentsService } from '@agt/contracts';
import { contentTypeOf } from './content-types.js';
import type { MeshAgent } from './directory.js';
import { apiBusy, badWebsitePath, lambdaAnswerInvalid, websiteOff } from './errors.js';
import { parseSitePath, storedPathOf, type SitePath } from './site-path.js';
import { apiRoutesOf, matchRoute, publicSiteOf } from './website-config.js';

/** Response headers a lambda may not set: framing, hop-by-hop, and cookies (all agents share the origin). */
const REFUSED_HEADERS = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'set-cookie',
  'trailer',
  'te',
  'proxy-authenticate',
]);
/** Request headers a lambda does not see: credentials meant for someone else. */
const HIDDEN_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);

/** API calls of one agent running or waiting at once; more are 429. */
export const MAX_WAITING_CALLS = 16;
const inFlight = new Map<string, number>();

export interface WebsiteDeps {
  agents: AgentsService;
  apiTimeoutMs: number;
}

/** The raw path after `/agents/{handle}/` (no query), or undefined for `/agents/{handle}` itself. */
export function restOfUrl(rawUrl: string): string | undefined {
  const path = rawUrl.split('?')[0]!;
  return /^\/agents\/[^/]+\/(.*)$/s.exec(path)?.[1];
}

export async function serveWebsite(
  deps: WebsiteDeps,
  agent: MeshAgent,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const rest = restOfUrl(request.raw.url ?? '');
  const site = rest === undefined ? undefined : parseSitePath(rest);
  if (!site) throw badWebsitePath();
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  for (const route of apiRoutesOf(agent.view)) {
    if (route.method !== method || site.folder) continue;
    const params = matchRoute(route.path, site.segments);
    if (params) return runApi(deps, agent, route.lambda, route.timeout_ms, { site, params }, request, reply);
  }
  if (method !== 'GET') throw badWebsitePath();
  return serveFile(deps, agent, site, request, reply);
}

async function serveFile(
  deps: WebsiteDeps,
  agent: MeshAgent,
  site: SitePath,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const config = publicSiteOf(agent.view);
  if (!config.enabled) throw websiteOff();
  const path = storedPathOf(site, config.index);
  if (!path) throw badWebsitePath();
  const file = await deps.agents.files.read(agent.view.id, path);
  if (!file) {
    // A folder asked without its slash: send the browser to the folder so relative links resolve.
    const index = site.folder ? undefined : storedPathOf({ segments: site.segments, folder: true }, config.index);
    if (index && (await deps.agents.files.read(agent.view.id, index))) {
      return reply.redirect(`${(request.raw.url ?? '').split('?')[0]}/`, 301);
    }
    throw badWebsitePath();
  }
  const etag = `"${createHash('sha1').update(file.content).digest('base64url')}"`;
  reply
    .header('content-type', contentTypeOf(path, file.mimeType, file.content))
    .header('etag', etag)
    .header('last-modified', new Date(file.updatedAt).toUTCString())
    .header('cache-control', 'no-cache')
    .header('x-content-type-options', 'nosniff');
  const match = request.headers['if-none-match'];
  if (typeof match === 'string' && match.split(',').some((tag) => tag.trim() === etag)) return reply.status(304).send();
  return reply.status(200).send(file.content);
}

interface LambdaAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | Buffer;
}

function answerOf(result: unknown): LambdaAnswer {
  const shaped =
    result !== null &&
    typeof result === 'object' &&
    !Array.isArray(result) &&
    ('status' in result || 'body' in result || 'headers' in result);
  const value = (shaped ? result : { body: result }) as { status?: unknown; headers?: unknown; body?: unknown };
  const status = value.status === undefined ? 200 : value.status;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599)
    throw lambdaAnswerInvalid('status must be an integer from 200 to 599');
  const headers: Record<string, string> = {};
  if (value.headers !== undefined) {
    if (value.headers === null || typeof value.headers !== 'object')
      throw lambdaAnswerInvalid('headers must be an object');
    for (const [name, text] of Object.entries(value.headers as Record<string, unknown>)) {
      const lower = name.toLowerCase();
      if (!/^[a-z0-9-]{1,100}$/.test(lower) || REFUSED_HEADERS.has(lower)) continue;
      // eslint-disable-next-line no-control-regex
      if (typeof text !== 'string' || text.length > 4000 || /[\r\n\u0000]/.test(text)) continue;
      headers[lower] = text;
    }
  }
  if (typeof value.body === 'string') {
    headers['content-type'] ??= 'text/plain; charset=utf-8';
    return { status, headers, body: value.body };
  }
  headers['content-type'] ??= 'application/json; charset=utf-8';
  return { status, headers, body: JSON.stringify(value.body ?? null) };
}

async function runApi(
  deps: WebsiteDeps,
  agent: MeshAgent,
  lambda: string,
  routeTimeoutMs: number | undefined,
  matched: { site: SitePath; params: Record<string, string> },
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string' && !HIDDEN_HEADERS.has(name)) headers[name] = value;
  }
  const input = {
    method: request.method,
    path: `/${matched.site.segments.join('/')}`,
    params: matched.params,
    query: { ...(request.query as Record<string, unknown>) },
    headers,
    body: request.body ?? null,
  };
  const timeoutMs = Math.min(routeTimeoutMs ?? deps.apiTimeoutMs, deps.apiTimeoutMs);
  // An agent's lambdas run one at a time: a flood of calls must not queue without bound.
  const waiting = inFlight.get(agent.view.id) ?? 0;
  if (waiting >= MAX_WAITING_CALLS) throw apiBusy();
  inFlight.set(agent.view.id, waiting + 1);
  let outcome: Awaited<ReturnType<AgentsService['runLambda']>>;
  try {
    outcome = await deps.agents.runLambda(agent.view.id, { lambda, input, timeoutMs });
  } finally {
    const left = (inFlight.get(agent.view.id) ?? 1) - 1;
    if (left > 0) inFlight.set(agent.view.id, left);
    else inFlight.delete(agent.view.id);
  }
  const answer = answerOf(outcome.result);
  reply.status(answer.status).headers(answer.headers).header('x-content-type-options', 'nosniff');
  return reply.send(answer.body);
}
