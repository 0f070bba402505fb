/**
 * `ctx.gauges` (contracts/runtime-gauges.ts): the kernel's live figures, walked at each read (nothing is
 * counted between reads). Queued turns are the loop executors' in-memory queues (the same turns the
 * agent's `agt_queue` holds as `queued`).
 */
import type { ExtensionStateName, RuntimeGaugesAccess } from '../../contracts/runtime-gauges.js';
import type { AgentRuntime } from '../runtime/agent-runtime.js';

export interface GaugeSources {
  agents(): Array<{ id: string; name: string }>;
  runtimeOf(agentId: string): AgentRuntime | undefined;
  sseClients(): number;
  extensions(): Array<{ name: string; enabled: boolean; state?: ExtensionStateName }>;
}

export function runtimeGauges(sources: GaugeSources): RuntimeGaugesAccess {
  const queuedTurns = (agentId: string) => {
    const runtime = sources.runtimeOf(agentId);
    let queued = 0;
    if (runtime) for (const loop of runtime.loopNames()) queued += runtime.existingLoop(loop)?.queuedTurnIds.length ?? 0;
    return queued;
  };
  return Object.freeze({
    read: () => ({
      agents: sources.agents().map((agent) => ({ id: agent.id, name: agent.name, queuedTurns: queuedTurns(agent.id) })),
      sseClients: sources.sseClients(),
      extensions: sources.extensions().map((row) => ({ name: row.name, state: row.state ?? (row.enabled ? 'pending' : 'disabled') })),
    }),
  });
}
