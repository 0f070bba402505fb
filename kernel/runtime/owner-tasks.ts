/**
 * What waits for the owner, per agent and as `ctx.agents.tasks` (contracts/owner-tasks.ts): the list
 * `GET /tasks` shows, answers through the same HilStore calls as the Tasks routes, and changes read off
 * the bus (`hil.requested`, `hil.resolved`, committed before they are emitted).
 */
import {
  AgtError,
  type AgentConfig,
  type EventPayloads,
  type OwnerTask,
  type OwnerTaskAnswer,
  type OwnerTaskChange,
  type OwnerTasksAccess,
  type UmbilicalEvent,
} from '@agt/contracts';
import { agentIdNotLoaded } from '../agents/errors.js';
import type { AgentRegistry } from '../agents/registry.js';
import type { AgentRuntime } from './agent-runtime.js';
import type { HilStore } from './hil.js';

/** One agent's pending approvals and budget stops, asks and suspend prompts (not sorted). */
export function pendingOf(agentId: string, agentName: string, hil: HilStore): OwnerTask[] {
  const base = { agentId, agentName };
  return [
    ...hil.listTasks('pending_approval', 500).map(
      (task): OwnerTask => ({
        kind: task.kind,
        id: task.id,
        ...base,
        loop: task.loop,
        turnId: task.turnId,
        createdAt: task.createdAt,
        tool: task.tool,
        args: task.args,
      }),
    ),
    ...hil.listAsks().map(
      (ask): OwnerTask => ({
        kind: 'ask',
        id: ask.requestId,
        ...base,
        loop: ask.loop,
        turnId: ask.turnId,
        createdAt: ask.createdAt,
        question: ask.question,
        ...(ask.schema ? { schema: ask.schema } : {}),
      }),
    ),
    ...hil.listSuspends().map(
      (prompt): OwnerTask => ({
        kind: 'suspend',
        id: prompt.requestId,
        ...base,
        loop: prompt.loop,
        turnId: prompt.turnId,
        createdAt: prompt.createdAt,
        reason: prompt.reason,
      }),
    ),
  ];
}

export interface OwnerTasksDeps {
  runtimeOf(agentId: string): AgentRuntime | undefined;
  registry: AgentRegistry;
  subscribe(listener: (event: UmbilicalEvent) => void): () => void;
}

export function ownerTasksAccess(deps: OwnerTasksDeps): OwnerTasksAccess {
  const loaded = (agentId: string) => {
    const runtime = deps.runtimeOf(agentId);
    if (!runtime) throw agentIdNotLoaded(agentId);
    return runtime;
  };
  const pending = (agentId: string) => {
    const runtime = loaded(agentId);
    return pendingOf(runtime.id, runtime.agent.name, runtime.hil).sort((a, b) => a.createdAt - b.createdAt);
  };
  const wrongKind = (id: string, kind: string) => new AgtError('not_found', `no pending ${kind} task ${id}`);

  /** "Always allow": the tool's declaration without its restriction, as `PUT /agents/{id}/tools/{name}` writes it. */
  const unrestrict = async (agentId: string, tool: string) => {
    const agent = deps.registry.byId(agentId);
    if (!agent) throw agentIdNotLoaded(agentId);
    const declared = agent.fileConfig.tools.find((entry) => entry.name === tool);
    const tools = declared
      ? agent.fileConfig.tools.map((entry) => (entry.name === tool ? { ...entry, restricted: false } : entry))
      : [...agent.fileConfig.tools, { name: tool, enabled: true, restricted: false }];
    await deps.registry.updateConfig(agent, { ...agent.fileConfig, tools } as AgentConfig);
  };

  return {
    pending,
    async answer(agentId, id, answer: OwnerTaskAnswer) {
      const { hil } = loaded(agentId);
      if (answer.kind === 'ask') return void hil.respondAsk(id, answer.answer);
      if (answer.kind === 'suspend') return void hil.answerSuspend(id, answer.resume);
      const task = hil.getTask(id);
      if (task.kind !== answer.kind) throw wrongKind(id, answer.kind);
      const args =
        answer.kind === 'budget' && answer.action === 'approve' && answer.amount !== undefined
          ? { ...task.args, amount: answer.amount }
          : undefined;
      hil.resolveTask(id, answer.action, answer.reason, args);
      if (answer.kind === 'approval' && answer.action === 'approve' && answer.always)
        await unrestrict(agentId, task.tool);
    },
    onChange(listener: (change: OwnerTaskChange) => void) {
      return deps.subscribe((event) => {
        try {
          changeOf(event);
        } catch {
          // A listener that throws loses its own change; the bus and the other listeners go on.
        }
      });
      function changeOf(event: UmbilicalEvent): void {
        const agentId = event.agent_id;
        if (!agentId) return;
        if (event.event_type === 'hil.resolved') {
          const payload = event.payload as EventPayloads['hil.resolved'];
          const kind = payload.kind === 'approval' ? taskKindOf(deps, agentId, payload.id) : payload.kind;
          listener({ type: 'closed', agentId, kind, id: payload.id, resolution: payload.resolution });
        } else if (event.event_type === 'hil.requested') {
          const payload = event.payload as EventPayloads['hil.requested'];
          const id = payload.kind === 'approval' ? payload.taskId : payload.requestId;
          const runtime = deps.runtimeOf(agentId);
          const task = runtime && pendingOf(agentId, runtime.agent.name, runtime.hil).find((item) => item.id === id);
          if (task) listener({ type: 'requested', task });
        }
      }
    },
  };
}

function taskKindOf(deps: OwnerTasksDeps, agentId: string, taskId: string): 'approval' | 'budget' {
  try {
    return deps.runtimeOf(agentId)?.hil.getTask(taskId).kind ?? 'approval';
  } catch {
    return 'approval';
  }
}
