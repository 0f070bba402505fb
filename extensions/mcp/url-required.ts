/**
 * A tool call the server refuses with `URLElicitationRequiredError` (JSON-RPC -32042, docs/mcp.md
 * "Elicitation"): the owner must first finish something in a browser. agt asks the calling turn, showing
 * each link and its message; once the owner accepts, it waits (up to `elicitationTimeoutMs`) for the
 * server's completion notification of every elicitation id, then the call is made again once. A refusal,
 * no answer, or no confirmation in time fails the call with a message the model reads.
 */
import type { ElicitRequestURLParams } from '@modelcontextprotocol/client';
import type { ToolContext } from '@agt/contracts';
import { refusalOf } from './elicitation.js';
import { callFailed } from './errors.js';
import type { ElicitingCall, UrlElicitations } from './url-elicitation.js';

/** The question the owner reads: each link with what it is for. */
export function urlRequiredQuestion(server: string, tool: string, elicitations: ElicitRequestURLParams[]): string {
  return [
    `MCP server ${server} needs you to open ${elicitations.length === 1 ? 'a link' : `${elicitations.length} links`} before tool ${tool} can run:`,
    ...elicitations.map((e) => `- ${e.message}\n  Link: ${e.url}`),
    `Open ${elicitations.length === 1 ? 'it' : 'them'} in a browser, then answer "done" (or "decline" / "cancel"); the call runs again once ${server} confirms.`,
  ].join('\n');
}

/**
 * Asks the owner and waits for the server's confirmations; resolves when the call may be made again,
 * throws the call's failure otherwise.
 */
export async function settleUrlRequired(
  server: string,
  call: ElicitingCall & { ask: ToolContext['ask']; signal: AbortSignal },
  elicitations: ElicitRequestURLParams[],
  /** Absent when the server announces no completions (the 2026-07-28 revision): the call is made again at once. */
  urls: UrlElicitations | undefined,
  timeoutMs: number,
): Promise<void> {
  const fail = (why: string) => callFailed(server, call.tool, why);
  const links = elicitations.filter((e) => e.mode === 'url' && typeof e.elicitationId === 'string' && e.url);
  if (links.length === 0) throw fail('the server asked for a URL elicitation without a link');
  if (!call.ask) throw fail('the server needs the owner to open a link first, and nobody can be asked here');
  for (const link of links) urls?.issue(link.elicitationId, call);
  const drop = () => {
    for (const link of links) urls?.drop(link.elicitationId);
  };
  const limit = AbortSignal.timeout(timeoutMs);
  let answer: string;
  try {
    ({ answer } = await call.ask(urlRequiredQuestion(server, call.tool, links), {
      signal: AbortSignal.any([call.signal, limit]),
    }));
  } catch (error) {
    drop();
    if (call.signal.aborted) throw call.signal.reason ?? error;
    throw fail('the owner did not open the link in time (the elicitation was cancelled)');
  }
  const refusal = refusalOf(answer);
  if (refusal) {
    drop();
    throw fail(`the owner ${refusal === 'decline' ? 'declined' : 'cancelled'} opening the link the server needs first`);
  }
  if (!urls) return;
  const outcomes = await Promise.all(links.map((link) => urls.wait(link.elicitationId, call.signal)));
  if (call.signal.aborted) throw call.signal.reason;
  if (outcomes.some((o) => o !== 'completed'))
    throw fail(`the server did not confirm the elicitation within ${timeoutMs} ms after the owner opened the link`);
}
