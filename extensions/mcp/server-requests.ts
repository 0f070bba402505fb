/**
 * What an MCP server asks of agt while one of its tools runs: `elicitation/create` (an ask of the calling
 * turn, here) and `sampling/createMessage` (a model call of the calling agent, sampling.ts). Both act for the
 * latest call under way on the connection (server-connection.ts keeps them); outside a call there is nobody
 * to act for.
 */
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/client';
import type { ToolContext } from '@agt/contracts';
import { elicitationAnswer, elicitationQuestion } from './elicitation.js';
import type { LogRing } from './log-ring.js';
import type { UrlElicitations } from './url-elicitation.js';

/** A tool call under way on a connection: what it can lend a server's request. */
export interface InFlight {
  tool: string;
  ask: ToolContext['ask'];
  sample: ToolContext['sample'];
  /** The model's id of the call, for the events that concern it. */
  callId?: string | undefined;
  progress?: ToolContext['progress'];
}

/** The connection a request came on: its server's name, its latest call under way, its log. */
export interface RequestScope {
  server: string;
  flight: InFlight | undefined;
  logs: LogRing;
  /** The connection's URL-mode elicitations and their completion notifications. */
  urls?: UrlElicitations;
}

/** How often an elicitation is asked when its answers do not fit the form. */
export const ELICITATION_TRIES = 3;

/**
 * The server's `elicitation/create`: an ask of the turn whose call is under way (the latest one when
 * several are), answered by the owner; declined when no call is under way (nobody to ask). Unanswered
 * within `elicitationTimeoutMs` it is cancelled; an answer that does not fit the form is asked again.
 */
export async function elicitFor(
  scope: RequestScope,
  timeoutMs: number,
  params: ElicitRequest['params'],
  signal: AbortSignal,
): Promise<ElicitResult> {
  const flight = scope.flight;
  if (!flight?.ask) {
    scope.logs.note('an elicitation came outside a tool call: declined');
    return { action: 'decline' };
  }
  // A URL elicitation's id is known from the start: its completion may come before the owner's answer.
  const urlId = params.mode === 'url' ? params.elicitationId : undefined;
  if (urlId) scope.urls?.issue(urlId, flight);
  const base = elicitationQuestion(scope.server, flight.tool, params);
  let problem: string | undefined;
  for (let attempt = 0; attempt < ELICITATION_TRIES; attempt++) {
    const limit = AbortSignal.timeout(timeoutMs);
    let answer: string;
    try {
      const question = problem ? `${base}\n(The last answer was not used: ${problem}.)` : base;
      // Form mode hands over the requested schema too, so the console can offer a form for it.
      const schema = params.mode === 'url' ? undefined : (params.requestedSchema as Record<string, unknown>);
      ({ answer } = await flight.ask(question, {
        signal: AbortSignal.any([signal, limit]),
        ...(schema ? { schema } : {}),
      }));
    } catch {
      scope.logs.note(
        limit.aborted ? 'an elicitation was not answered in time: cancelled' : 'an elicitation ended unanswered',
      );
      if (urlId) scope.urls?.drop(urlId);
      return { action: 'cancel' };
    }
    const outcome = elicitationAnswer(params, answer);
    if ('result' in outcome) {
      scope.logs.note(`elicitation answered: ${outcome.result.action}`);
      // Accepted in URL mode: the call now waits for the server to confirm (announced, not awaited here:
      // the server holds the call open until then).
      if (urlId && outcome.result.action === 'accept') void scope.urls?.wait(urlId);
      else if (urlId) scope.urls?.drop(urlId);
      return outcome.result;
    }
    problem = outcome.problem;
  }
  scope.logs.note('an elicitation got no usable answer: cancelled');
  if (urlId) scope.urls?.drop(urlId);
  return { action: 'cancel' };
}
