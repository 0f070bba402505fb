/**
 * `ctx.gauges` (contracts/runtime-gauges.ts): the kernel's live figures, walked at each read (nothing is
 * counted between reads). Queued turns are the loop executors' in-memory queues (the same turns the
 * agent's `agt_queue` holds as `queued`).
 */
import type { ExtensionStateName, RuntimeGaugesAccess } from '@agt/contracts';

/**
 * What the gauges read of an agent's runtime, named here so extensions/ does not import runtime/ (which
 * imports extensions/ for the contributions: a folder loop); `AgentRuntime` satisfies it.
 */
export interface GaugedRuntime {
  loopNames(): readonly string[];
  existingLoop(loop: string): { readonly queuedTurnIds: readonly string[] } | undefined;
}

export interface GaugeSources {
  agents(): Array<{ id: string; name: string }>;
  runtimeOf(agentId: string): GaugedRuntime | undefined;
  sseClients(): number;
  extensions(): Array<{ name: string; enabled: boolean; state?: ExtensionStateName }>;
}

export function runtimeGauges(sources: GaugeSources): RuntimeGaugesAccess {
  const queuedTurns = (agentId: string) => {
    const runtime = sources.runtimeOf(agentId);
    let queued = 0;
    if (runtime)
      for (const loop of runtime.loopNames()) queued += runtime.existingLoop(loop)?.queuedTurnIds.length ?? 0;
    return queued;
  };
  return Object.freeze({
    read: () => ({
      agents: sources.agents().map((agent) => ({ id: agent.id, name: agent.name, queuedTurns: queuedTurns(agent.id) })),
      sseClients: sources.sseClients(),
      extensions: sources
        .extensions()
        .map((row) => ({ name: row.name, state: row.state ?? (row.enabled ? 'pending' : 'disabled') })),
    }),
  });
}
