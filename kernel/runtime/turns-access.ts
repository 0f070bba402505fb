/**
 * `ctx.agents.turns` (contracts/agent-turns.ts): the runtime's chat, inbox dispatch, interrupt and
 * human-in-the-loop calls for extensions that let other tools talk to agents (A2A, the MCP server).
 * The same code paths as the Chat, Agents and Tasks routes: every check those make applies here.
 */
import {
  type AgentTurnsAccess,
  type ExtensionTrigger,
  type InboundTrace,
  type TurnPlace,
  isTraceparent,
  assertJsonDepth,
} from '@agt/contracts';
import type { AgentRuntime } from './agent-runtime.js';
import { normalizeDispatch } from './dispatch.js';
import { invalidDispatch, noSuchLoop } from './errors.js';
import { historyMessage } from './executor/context.js';
import { agentIdNotLoaded } from '../agents/errors.js';
import { turnRecordsAccess } from './turn-records-access.js';

/** The triggers `fire` takes: a typed list, so an extension cannot pose as the kernel's own sources. */
const EXTENSION_TRIGGERS: ReadonlySet<ExtensionTrigger> = new Set<ExtensionTrigger>(['on_mcp_resource']);

/** `traced`: hands a well-formed traceparent of a delivered message to the `traceContext` provider. */
export function turnsAccess(
  runtimeOf: (agentId: string) => AgentRuntime | undefined,
  traced?: (trace: InboundTrace) => void,
): AgentTurnsAccess {
  const runtime = (agentId: string) => {
    const found = runtimeOf(agentId);
    if (!found) throw agentIdNotLoaded(agentId);
    return found;
  };
  /** The loop whose executor runs or queues `turnId`, and which. */
  const find = (agentId: string, turnId: string) => {
    const agentRuntime = runtime(agentId);
    for (const loop of agentRuntime.loopNames()) {
      const executor = agentRuntime.existingLoop(loop);
      if (!executor) continue;
      if (executor.currentTurnId === turnId) return { agentRuntime, loop, place: 'running' as TurnPlace };
      if (executor.queuedTurnIds.includes(turnId)) return { agentRuntime, loop, place: 'queued' as TurnPlace };
    }
    return { agentRuntime, loop: undefined, place: 'none' as TurnPlace };
  };
  return {
    chat(agentId, text, options = {}) {
      const { traceparent } = options;
      // As for deliver: handed on once the turn is committed and before it can start.
      const accepted =
        traced && isTraceparent(traceparent)
          ? (turnId: string) => traced({ agentId, turnId, source: 'mcp', traceparent })
          : undefined;
      return runtime(agentId).chat(options.loop ?? 'main', text, options.idempotencyKey, accepted);
    },
    deliver(agentId, message, options = {}) {
      // The dispatch normalizer refuses `source: user` and internal flags, as for `POST /trigger`.
      const dispatch = normalizeDispatch({
        event: {
          type: 'inbox',
          source: message.source,
          data: {
            message: {
              source: message.source,
              ...(message.sender ? { sender: message.sender } : {}),
              text: message.text,
              ...(message.data !== undefined ? { data: message.data } : {}),
            },
          },
        },
      });
      const { traceparent } = message;
      // Handed on once the turn is committed and before it can start, so the turn opens inside that trace.
      const accepted =
        traced && isTraceparent(traceparent)
          ? (turnId: string) => traced({ agentId, turnId, source: message.source, traceparent })
          : undefined;
      // No request digest: a repeated key answers its first turn whatever the message (an A2A retry's
      // context id may differ from the first attempt's).
      return runtime(agentId).dispatch(
        dispatch,
        options.idempotencyKey === undefined ? undefined : { key: options.idempotencyKey },
        accepted,
      );
    },
    fire(agentId, trigger, data) {
      if (!EXTENSION_TRIGGERS.has(trigger)) throw invalidDispatch(`an extension cannot fire ${String(trigger)}`);
      assertJsonDepth(data, 'the trigger data');
      return runtime(agentId).fire(trigger, data);
    },
    place: (agentId, turnId) => find(agentId, turnId).place,
    interrupt(agentId, turnId) {
      const { agentRuntime, loop, place } = find(agentId, turnId);
      return place === 'running' && loop !== undefined ? agentRuntime.interrupt(loop) : false;
    },
    asks: (agentId) => runtime(agentId).hil.listAsks(),
    answerAsk: (agentId, requestId, answer, options = {}) =>
      runtime(agentId).hil.respondAsk(requestId, answer, options.fromCaller === true),
    approvals: (agentId) =>
      runtime(agentId)
        .hil.listTasks('pending_approval', 500)
        .map((task) => ({
          taskId: task.id,
          tool: task.tool,
          args: task.args,
          loop: task.loop,
          turnId: task.turnId,
          createdAt: task.createdAt,
        })),
    resolveApproval(agentId, taskId, action, reason) {
      runtime(agentId).hil.resolveTask(taskId, action, reason);
    },
    history(agentId, options = {}) {
      const agentRuntime = runtime(agentId);
      const loop = options.loop ?? 'main';
      if (!agentRuntime.loopNames().includes(loop)) throw noSuchLoop(agentRuntime.agent.name, loop);
      const limit = Math.min(500, Math.max(1, Math.trunc(options.limit ?? 50)));
      return agentRuntime.agent.file.loop.tail(loop, limit).map((row) => {
        const { toolCalls: _calls, toolCallId: _callId, ...entry } = historyMessage(row);
        return entry;
      });
    },
    records: turnRecordsAccess((agentId) => runtime(agentId).agent.file),
  };
}
