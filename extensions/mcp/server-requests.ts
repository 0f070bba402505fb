/**
 * What an MCP server asks of agt while one of its tools runs: `sampling/createMessage` (a model call of
 * the calling agent) and `elicitation/create` (an ask of the calling turn). Both act for the latest call
 * under way on the connection (server-connection.ts keeps them); outside a call there is nobody to act for.
 */
import type {
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
} from '@modelcontextprotocol/client';
import type { ToolContext } from '@agt/contracts';
import { elicitationAnswer, elicitationQuestion } from './elicitation.js';
import type { LogRing } from './log-ring.js';
import { loadSdk } from './sdk.js';

/** A tool call under way on a connection: what it can lend a server's request. */
export interface InFlight {
  tool: string;
  ask: ToolContext['ask'];
  sample: ToolContext['sample'];
}

/** The connection a request came on: its server's name, its latest call under way, its log. */
export interface RequestScope {
  server: string;
  flight: InFlight | undefined;
  logs: LogRing;
}

/** How often an elicitation is asked when its answers do not fit the form. */
export const ELICITATION_TRIES = 3;

/**
 * The server's `sampling/createMessage`: a model call of the agent whose tool call is under way, on its
 * provider and model and within its budgets, by the registration's `sampling` policy (`ask`: an
 * approval task showing the prompt first). Outside a tool call there is no agent to charge: refused.
 */
export async function sampleFor(
  scope: RequestScope,
  policy: 'deny' | 'ask' | 'allow',
  params: CreateMessageRequest['params'],
  signal: AbortSignal,
): Promise<CreateMessageResult> {
  const { ProtocolError, ProtocolErrorCode } = await loadSdk();
  const flight = scope.flight;
  const refuse = (why: string) => {
    scope.logs.note(`sampling refused: ${why}`);
    return new ProtocolError(ProtocolErrorCode.InvalidRequest, `agt refused the sampling request: ${why}`);
  };
  if (policy === 'deny') throw refuse("the owner's registration denies sampling");
  if (!flight?.sample) throw refuse('it came outside a tool call (no agent to run it for)');
  if ((params as { tools?: unknown[] }).tools?.length) throw refuse('tools in sampling are not supported');
  const messages = params.messages.map((message) => {
    const parts = Array.isArray(message.content) ? message.content : [message.content];
    const text = parts
      .map((part) => (part.type === 'text' ? part.text : `[${part.type} content, not passed on]`))
      .join('\n');
    return { role: message.role, content: text };
  });
  try {
    const answer = await flight.sample({
      messages,
      ...(params.systemPrompt ? { system: params.systemPrompt } : {}),
      maxTokens: params.maxTokens,
      ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
      purpose: 'mcp_sampling',
      signal,
      ...(policy === 'ask'
        ? {
            approval: {
              tool: `mcp_${scope.server} sampling`,
              args: {
                server: scope.server,
                duringTool: flight.tool,
                ...(params.systemPrompt ? { systemPrompt: params.systemPrompt } : {}),
                messages,
                maxTokens: params.maxTokens,
              },
            },
          }
        : {}),
    });
    scope.logs.note(`sampling answered by ${answer.model}`);
    return {
      role: 'assistant',
      content: { type: 'text', text: answer.text },
      model: answer.model,
      stopReason:
        answer.stopReason === 'max_tokens' ? 'maxTokens' : answer.stopReason === 'end' ? 'endTurn' : answer.stopReason,
    };
  } catch (error) {
    throw refuse(scope.logs.scrub((error as Error).message).slice(0, 300));
  }
}

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
      return { action: 'cancel' };
    }
    const outcome = elicitationAnswer(params, answer);
    if ('result' in outcome) {
      scope.logs.note(`elicitation answered: ${outcome.result.action}`);
      return outcome.result;
    }
    problem = outcome.problem;
  }
  scope.logs.note('an elicitation got no usable answer: cancelled');
  return { action: 'cancel' };
}
