/**
 * A server's `sampling/createMessage`: a model call of the agent whose tool call is under way, on its
 * provider and model and within its budgets (docs/mcp.md "Sampling"). With tools (the server offers its
 * own tool definitions), the model may answer with tool calls: agt hands them back as `tool_use` content
 * with stop reason `toolUse` and runs nothing; the server runs them and asks again with their results.
 */
import type {
  CreateMessageRequest,
  CreateMessageResult,
  CreateMessageResultWithTools,
  SamplingMessage,
} from '@modelcontextprotocol/client';
import type { ModelMessage, ModelTool, ToolSampleResult } from '@agt/contracts';
import type { RequestScope } from './server-requests.js';
import { loadSdk } from './sdk.js';

export type SamplingPolicy = 'deny' | 'ask' | 'allow';

type Part = SamplingMessage['content'] extends infer C ? (C extends Array<infer P> ? P : C) : never;

const partsOf = (message: SamplingMessage): Part[] =>
  Array.isArray(message.content) ? message.content : [message.content];

/** Text of content blocks; what is not text (an image, audio) is named, not passed on. */
const textOf = (parts: ReadonlyArray<{ type: string; text?: string }>) =>
  parts.map((part) => (part.type === 'text' ? (part.text ?? '') : `[${part.type} content, not passed on]`)).join('\n');

/** Whether the request takes part in tool use: tools offered, a tool choice, or tool calls and results. */
export const usesTools = (params: CreateMessageRequest['params']): boolean =>
  Boolean(params.tools?.length || params.toolChoice) ||
  params.messages.some((message) => partsOf(message).some((p) => p.type === 'tool_use' || p.type === 'tool_result'));

/**
 * The server's messages as the model's: text as text, an assistant's `tool_use` blocks as its tool calls, a
 * user's `tool_result` blocks as tool messages (named by the call they answer).
 */
export function modelMessages(params: CreateMessageRequest['params']): ModelMessage[] {
  const names = new Map<string, string>();
  const out: ModelMessage[] = [];
  for (const message of params.messages) {
    const parts = partsOf(message);
    const uses = parts.flatMap((p) => (p.type === 'tool_use' ? [p] : []));
    const results = parts.flatMap((p) => (p.type === 'tool_result' ? [p] : []));
    const rest = parts.filter((p) => p.type !== 'tool_use' && p.type !== 'tool_result');
    if (message.role === 'assistant') {
      for (const use of uses) names.set(use.id, use.name);
      out.push({
        role: 'assistant',
        content: textOf(rest as Array<{ type: string; text?: string }>),
        ...(uses.length ? { toolCalls: uses.map((use) => ({ id: use.id, name: use.name, args: use.input })) } : {}),
      });
      continue;
    }
    for (const result of results) {
      out.push({
        role: 'tool',
        toolCallId: result.toolUseId,
        name: names.get(result.toolUseId) ?? 'tool',
        content: textOf(result.content as Array<{ type: string; text?: string }>),
        ...(result.isError ? { isError: true } : {}),
      });
    }
    if (rest.length || !results.length) {
      out.push({ role: 'user', content: textOf(rest as Array<{ type: string; text?: string }>) });
    }
  }
  return out;
}

/**
 * The server's tools as the model sees them. `toolChoice` has no provider-neutral form: `none` offers no
 * tools (the model answers in text), `required` asks for a call in the system prompt.
 */
function offered(params: CreateMessageRequest['params']): { tools: ModelTool[]; system: string | undefined } {
  const mode = params.toolChoice?.mode ?? 'auto';
  const tools =
    mode === 'none'
      ? []
      : (params.tools ?? []).map((tool) => ({
          name: tool.name,
          description: tool.description ?? '',
          inputSchema: tool.inputSchema as Record<string, unknown>,
        }));
  const must = mode === 'required' && tools.length ? 'Answer by calling at least one of the tools.' : undefined;
  const system = [params.systemPrompt, must].filter(Boolean).join('\n\n') || undefined;
  return { tools, system };
}

const stopReason = (reason: ToolSampleResult['stopReason']) =>
  reason === 'max_tokens' ? 'maxTokens' : reason === 'end' ? 'endTurn' : reason === 'tool_use' ? 'toolUse' : reason;

/**
 * Runs the request by the registration's `sampling` policy (`ask`: an approval task showing the prompt
 * first). Tools in sampling only under `allow`: an approval of each round of a tool loop would ask the owner
 * about calls they cannot see the results of. Outside a tool call there is no agent to charge: refused.
 */
export async function sampleFor(
  scope: RequestScope,
  policy: SamplingPolicy,
  params: CreateMessageRequest['params'],
  signal: AbortSignal,
): Promise<CreateMessageResult | CreateMessageResultWithTools> {
  const { ProtocolError, ProtocolErrorCode } = await loadSdk();
  const flight = scope.flight;
  const refuse = (why: string) => {
    scope.logs.note(`sampling refused: ${why}`);
    return new ProtocolError(ProtocolErrorCode.InvalidRequest, `agt refused the sampling request: ${why}`);
  };
  if (policy === 'deny') throw refuse("the owner's registration denies sampling");
  if (!flight?.sample) throw refuse('it came outside a tool call (no agent to run it for)');
  const withTools = usesTools(params);
  if (withTools && policy !== 'allow') {
    throw refuse(`tools in sampling need the registration's sampling policy allow (it is ${policy})`);
  }
  const messages = modelMessages(params);
  const { tools, system } = withTools ? offered(params) : { tools: [], system: params.systemPrompt };
  try {
    const answer = await flight.sample({
      messages,
      ...(system ? { system } : {}),
      ...(tools.length ? { tools } : {}),
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
    const calls = answer.toolCalls ?? [];
    scope.logs.note(
      `sampling answered by ${answer.model}${calls.length ? ` with ${calls.length} tool call(s): ${calls.map((c) => c.name).join(', ')}` : ''}`,
    );
    // The SDK checks the answer against the result type of the request: content blocks when tools were
    // offered, one text block otherwise.
    if (params.tools || params.toolChoice) {
      return {
        role: 'assistant',
        content: [
          ...(answer.text || !calls.length ? [{ type: 'text' as const, text: answer.text }] : []),
          ...calls.map((call) => ({ type: 'tool_use' as const, id: call.id, name: call.name, input: call.args })),
        ],
        model: answer.model,
        stopReason: calls.length ? 'toolUse' : stopReason(answer.stopReason),
      };
    }
    return {
      role: 'assistant',
      content: { type: 'text', text: answer.text },
      model: answer.model,
      stopReason: stopReason(answer.stopReason),
    };
  } catch (error) {
    throw refuse(scope.logs.scrub((error as Error).message).slice(0, 300));
  }
}
