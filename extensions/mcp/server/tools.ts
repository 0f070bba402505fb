/**
 * The tools of agt's MCP server: `list_agents`, `chat`, `get_tasks`, `answer_task`. Every tool takes the
 * agent through {@link Exposed} (settings `mcpServer.agents`), so an agent outside the list is never
 * reached. The endpoint requires the daemon's bearer token, so a client acts with the owner's authority:
 * `chat` is the owner's chat (it interrupts a running turn, as `POST /agents/{id}/chat` does) and answers
 * resolve the owner's approvals and asks.
 */
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type {
  CallToolResult,
  ElicitResult,
  ServerNotification,
  ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { EventBus } from '@agt/contracts';
import type { AgentTurnsAccess } from '@agt/contracts';
import { type Exposed, notExposed } from './exposed.js';
import { TurnWatch, type TurnStep } from './turn-watch.js';

export interface ToolDeps {
  exposed: Exposed;
  turns: AgentTurnsAccess;
  bus: EventBus;
}

/** Below the MCP SDK client's default 60 s request timeout; `wait_seconds` asks for more (progress resets it). */
export const DEFAULT_WAIT_S = 50;
export const MAX_WAIT_S = 600;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type Waiting = Extract<TurnStep, { type: 'waiting' }>;

const text = (value: string, structured?: Record<string, unknown>, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: value }],
  ...(structured ? { structuredContent: structured } : {}),
  ...(isError ? { isError: true } : {}),
});
const failure = (message: string) => text(message, undefined, true);
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export function registerTools(server: McpServer, deps: ToolDeps): void {
  const { exposed, turns } = deps;

  server.registerTool(
    'list_agents',
    {
      description: 'The agt agents this server exposes (id, name, handle, description).',
      annotations: { readOnlyHint: true },
    },
    async () => {
      const agents = exposed.list().map((agent) => ({
        id: agent.id,
        name: agent.name,
        handle: agent.handle ?? null,
        description: agent.config.description ?? '',
      }));
      return text(JSON.stringify(agents, null, 2), { agents });
    },
  );

  server.registerTool(
    'chat',
    {
      description:
        "Send a message to an agent (the owner's chat on its main loop) and wait for its reply. While the turn runs, progress notifications follow it. " +
        'An approval or question the turn waits on is asked through elicitation when the client supports it; otherwise the result says what waits and how to answer it (answer_task).',
      inputSchema: {
        agent: z.string().min(1).describe('agent id, handle or name'),
        text: z.string().min(1).max(100_000),
        wait_seconds: z
          .number()
          .int()
          .min(0)
          .max(MAX_WAIT_S)
          .optional()
          .describe(`how long to wait for the reply (default ${DEFAULT_WAIT_S})`),
      },
    },
    async (args, extra) => {
      const agent = exposed.find(args.agent);
      if (!agent) return failure(notExposed(args.agent));
      const watch = new TurnWatch(deps.bus, agent.id);
      try {
        let turnId: string;
        try {
          // The client's trace context (`_meta.traceparent`): the turn joins its trace when a tracer is on.
          const traceparent = extra._meta?.traceparent;
          turnId = turns.chat(agent.id, args.text, typeof traceparent === 'string' ? { traceparent } : {});
        } catch (error) {
          return failure(`The chat was refused: ${messageOf(error)}`);
        }
        watch.follow(turnId);
        return await followTurn(
          server,
          deps,
          agent.id,
          turnId,
          watch,
          (args.wait_seconds ?? DEFAULT_WAIT_S) * 1000,
          extra,
        );
      } finally {
        watch.close();
      }
    },
  );

  server.registerTool(
    'get_tasks',
    {
      description: 'Approvals and questions (asks) the exposed agents wait on, oldest first.',
      inputSchema: { agent: z.string().min(1).optional().describe('one agent (id, handle or name)') },
      annotations: { readOnlyHint: true },
    },
    async (args) => {
      const agents =
        args.agent === undefined ? exposed.list() : [exposed.find(args.agent)].filter((agent) => agent !== undefined);
      if (args.agent !== undefined && agents.length === 0) return failure(notExposed(args.agent));
      const tasks = agents.flatMap((agent) => [
        ...turns.approvals(agent.id).map((a) => ({
          agent: agent.id,
          kind: 'approval',
          id: a.taskId,
          tool: a.tool,
          args: a.args,
          turnId: a.turnId,
          createdAt: a.createdAt,
        })),
        ...turns.asks(agent.id).map((a) => ({
          agent: agent.id,
          kind: 'ask',
          id: a.requestId,
          question: a.question,
          turnId: a.turnId,
          createdAt: a.createdAt,
        })),
      ]);
      tasks.sort((a, b) => a.createdAt - b.createdAt);
      return text(tasks.length === 0 ? 'Nothing waits.' : JSON.stringify(tasks, null, 2), { tasks });
    },
  );

  server.registerTool(
    'answer_task',
    {
      description:
        'Answer what an agent waits on (see get_tasks): an approval with decision approve or deny, an ask with answer.',
      inputSchema: {
        agent: z.string().min(1),
        id: z.string().min(1).describe('the approval task id or the ask request id'),
        decision: z.enum(['approve', 'deny']).optional().describe('for an approval'),
        answer: z.string().max(100_000).optional().describe('for an ask'),
        reason: z.string().max(2000).optional().describe('why (an approval)'),
      },
    },
    async (args) => {
      const agent = exposed.find(args.agent);
      if (!agent) return failure(notExposed(args.agent));
      try {
        if (turns.approvals(agent.id).some((a) => a.taskId === args.id)) {
          if (!args.decision) return failure('This is an approval: give decision "approve" or "deny".');
          turns.resolveApproval(agent.id, args.id, args.decision, args.reason);
          return text(`Approval ${args.id}: ${args.decision}.`, {
            id: args.id,
            kind: 'approval',
            decision: args.decision,
          });
        }
        if (turns.asks(agent.id).some((a) => a.requestId === args.id)) {
          if (args.answer === undefined) return failure('This is a question: give answer.');
          turns.answerAsk(agent.id, args.id, args.answer);
          return text(`Answered ${args.id}.`, { id: args.id, kind: 'ask' });
        }
        return failure(`Agent ${agent.name} waits on nothing with id ${args.id}.`);
      } catch (error) {
        return failure(messageOf(error));
      }
    },
  );
}

/** Waits for the turn's end, sending progress and asking what it waits on by elicitation where it can. */
async function followTurn(
  server: McpServer,
  deps: ToolDeps,
  agentId: string,
  turnId: string,
  watch: TurnWatch,
  waitMs: number,
  extra: Extra,
): Promise<CallToolResult> {
  const until = Date.now() + waitMs;
  const token = extra._meta?.progressToken;
  let progress = 0;
  const notify = async (message: string) => {
    // The turn's steps are log messages too (`logging/setLevel` filters them), for clients that gave no token.
    await server.server
      .sendLoggingMessage({ level: 'info', logger: 'agt', data: message }, extra.sessionId)
      .catch(() => {});
    if (token === undefined) return;
    await extra
      .sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: ++progress, message },
      })
      .catch(() => {});
  };
  for (;;) {
    const step = await watch.next(Math.max(0, until - Date.now()), extra.signal);
    if (!step) {
      return text(
        `The turn ${turnId} is still running; its reply will be in the agent's conversation resource (agt://agents/${agentId}/conversation).`,
        { turnId, status: 'running' },
      );
    }
    if (step.type === 'progress') await notify(step.message);
    else if (step.type === 'end') return ended(turnId, step);
    else {
      await notify(describe(step));
      const answered = await elicit(server, deps, agentId, step, until - Date.now(), extra);
      if (!answered) return waitingResult(agentId, turnId, step);
    }
  }
}

function ended(turnId: string, step: Extract<TurnStep, { type: 'end' }>): CallToolResult {
  if (step.status === 'completed') return text(step.text, { turnId, status: 'completed', reply: step.text });
  if (step.status === 'interrupted')
    return text(`The turn ${turnId} was interrupted.${step.text ? ` ${step.text}` : ''}`, {
      turnId,
      status: 'interrupted',
      reply: step.text,
    });
  if (step.status === 'error')
    return text(`The turn ${turnId} failed (${step.code}).`, { turnId, status: 'error', code: step.code }, true);
  return text(
    `The chat was dropped before it ran (${step.reason}).`,
    { turnId, status: 'discarded', reason: step.reason },
    true,
  );
}

function describe(step: Waiting): string {
  if (step.kind === 'approval') return `The agent waits for approval to run ${step.tool}`;
  if (step.kind === 'ask') return `The agent asks: ${step.question}`;
  return `The agent is suspended: ${step.reason}`;
}

/** What waits and how to answer it, for a client without elicitation (or one that did not answer). */
function waitingResult(agentId: string, turnId: string, step: Waiting): CallToolResult {
  const id = step.kind === 'approval' ? step.taskId : step.requestId;
  const how =
    step.kind === 'approval'
      ? `Answer with answer_task {"agent": "${agentId}", "id": "${id}", "decision": "approve" | "deny"}.`
      : step.kind === 'ask'
        ? `Answer with answer_task {"agent": "${agentId}", "id": "${id}", "answer": "..."}.`
        : 'Only the owner can resume it (agt inbox).';
  return text(`${describe(step)}. ${how} The reply will then be in the agent's conversation resource.`, {
    turnId,
    status: 'waiting',
    waiting: {
      kind: step.kind,
      id,
      ...(step.kind === 'approval'
        ? { tool: step.tool, args: step.args }
        : step.kind === 'ask'
          ? { question: step.question }
          : { reason: step.reason }),
    },
  });
}

/**
 * Asks the client's user through elicitation (when the client declared the capability): an approval as
 * approve / deny, an ask as a free answer. True when the answer was applied; false when the client cannot
 * elicit, declined or cancelled (the task stays pending), or time ran out.
 */
async function elicit(
  server: McpServer,
  deps: ToolDeps,
  agentId: string,
  step: Waiting,
  ms: number,
  extra: Extra,
): Promise<boolean> {
  if (step.kind === 'suspend' || ms <= 0 || !server.server.getClientCapabilities()?.elicitation) return false;
  const options = { relatedRequestId: extra.requestId, signal: extra.signal, timeout: ms };
  let result: ElicitResult;
  try {
    if (step.kind === 'approval') {
      result = await server.server.elicitInput(
        {
          mode: 'form',
          message: `The agent wants to run ${step.tool} with ${JSON.stringify(step.args).slice(0, 2000)}. Approve?`,
          requestedSchema: {
            type: 'object',
            properties: {
              decision: { type: 'string', enum: ['approve', 'deny'], title: 'Decision' },
              reason: { type: 'string', title: 'Reason' },
            },
            required: ['decision'],
          },
        },
        options,
      );
    } else {
      result = await server.server.elicitInput(
        {
          mode: 'form',
          message: step.question,
          requestedSchema: {
            type: 'object',
            properties: { answer: { type: 'string', title: 'Answer' } },
            required: ['answer'],
          },
        },
        options,
      );
    }
  } catch {
    return false;
  }
  if (result.action !== 'accept' || !result.content) return false;
  try {
    if (step.kind === 'approval') {
      const decision = result.content.decision === 'approve' ? 'approve' : 'deny';
      deps.turns.resolveApproval(
        agentId,
        step.taskId,
        decision,
        typeof result.content.reason === 'string' && result.content.reason ? result.content.reason : undefined,
      );
    } else {
      deps.turns.answerAsk(agentId, step.requestId, String(result.content.answer ?? ''));
    }
    return true;
  } catch {
    // Answered elsewhere meanwhile (conflict, not_found): the turn goes on as that answer says.
    return true;
  }
}
