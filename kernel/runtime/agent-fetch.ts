/**
 * `ctx.agents.fetch` (contracts/agent-turns.ts): a request under the agent's fetch policy, by the code
 * of `sys_fetch` (fetch-tool.ts: the destination checked after DNS and on every redirect hop, no pooled
 * sockets). The allow list is the agent's effective `security.fetch_allow_hosts` (already capped by the
 * owner's ceiling when the agent loaded).
 */
import { AgtError, type AgentFetch } from '@agt/contracts';
import { AddressRefused, fetchFollowing, readCapped } from './tools/fetch-tool.js';
import { allowListOf } from '../agents/fetch-policy.js';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import { agentIdNotLoaded } from '../agents/errors.js';

const DEFAULT_TIMEOUT_MS = 15_000;
const MAX_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_BYTES = 256 * 1024;
const MAX_BYTES = 4 * 1024 * 1024;

export function agentFetch(findAgent: (agentId: string) => LoadedAgent | undefined): AgentFetch {
  return async (agentId, request) => {
    const agent = findAgent(agentId);
    if (!agent) throw agentIdNotLoaded(agentId);
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      throw new AgtError('bad_request', `not a URL: ${request.url.slice(0, 200)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new AgtError('bad_request', 'only http and https URLs can be fetched');
    const timeout = Math.min(MAX_TIMEOUT_MS, Math.max(1, request.timeoutMs ?? DEFAULT_TIMEOUT_MS));
    const signal = AbortSignal.timeout(timeout);
    try {
      const response = await fetchFollowing(
        { url, method: request.method ?? 'GET', headers: request.headers ?? {}, body: request.body },
        allowListOf(agent.config.security),
        signal,
      );
      try {
        const content = await readCapped(
          response,
          Math.min(MAX_BYTES, Math.max(1, request.maxBytes ?? DEFAULT_MAX_BYTES)),
        );
        const headers = Object.fromEntries(
          Object.entries(response.headers).map(([name, value]) => [name, [value].flat().join(', ')]),
        );
        return { status: response.statusCode ?? 0, headers, text: content.text, truncated: content.truncated };
      } finally {
        response.destroy();
      }
    } catch (error) {
      if (error instanceof AddressRefused)
        throw new AgtError('forbidden', error.message.replace(/^sys_fetch/, "the agent's fetch policy"));
      if (signal.aborted) throw new Error(`timed out after ${timeout} ms`);
      throw error;
    }
  };
}
