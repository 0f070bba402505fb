/**
 * Step-up authorization (MCP authorization, "Scope challenge handling"): a server that answers a request
 * with 403 and `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` wants a token with more
 * scopes. The SDK's transport would answer by starting an authorization itself; agt's sign-ins are the
 * owner's (a browser, consent), so the connection's `fetch` turns that answer into the call's failure
 * (`mcp_signin_required`, naming the scopes) before the SDK sees it, and the sign-in remembers the union
 * of scopes for the owner's next `agt mcp login` (oauth-signin.ts).
 */
import type { FetchLike } from '@modelcontextprotocol/client';

/** Space-separated scopes of every list, each once, in first-seen order. */
export function scopeUnion(...lists: Array<string | undefined>): string {
  const out = new Set<string>();
  for (const list of lists) for (const scope of (list ?? '').split(/\s+/)) if (scope) out.add(scope);
  return [...out].join(' ');
}

/** The `scope` of a 403 `insufficient_scope` challenge, or undefined for any other answer. */
export function insufficientScope(response: Response): { scope: string | undefined } | undefined {
  if (response.status !== 403) return undefined;
  const header = response.headers.get('www-authenticate') ?? '';
  if (!/^\s*Bearer\s/i.test(header) || !/\berror\s*=\s*"?insufficient_scope"?/i.test(header)) return undefined;
  const scope = /\bscope\s*=\s*"([^"]*)"/i.exec(header)?.[1] ?? /\bscope\s*=\s*([^\s,]+)/i.exec(header)?.[1];
  return { scope: scope?.trim() || undefined };
}

/**
 * A `fetch` for the SDK's HTTP transports: answers pass through, except a 403 `insufficient_scope`, which
 * rejects with the error `stepUp` gives (the request it answered fails with it).
 */
export function stepUpFetch(stepUp: (scope: string | undefined) => Promise<Error>, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    const challenge = insufficientScope(response);
    if (!challenge) return response;
    await response.body?.cancel().catch(() => {});
    throw await stepUp(challenge.scope);
  };
}
