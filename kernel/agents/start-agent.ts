/**
 * Starting a loaded agent: the runtime fires `on_startup`, the agent is marked started (so its
 * `stopped` hooks run at unload), `agent.started` is announced and the `started` lifecycle hooks run.
 * Used by agent creation and `POST /agents/{id}/start`.
 */
import type { EventBus } from '@agt/contracts';
import type { Contributions } from '../extensions/contributions.js';
import type { LoadedAgent } from './loaded-agent.js';
import type { AgentRegistry } from './registry.js';
import type { AgentRuntimeHooks } from './runtime-hooks.js';

export interface StartDeps {
  runtime: AgentRuntimeHooks;
  bus: EventBus;
  contributions: Contributions;
  registry: AgentRegistry;
}

/** Returns whether the agent started; a runtime failure is logged to the agent, never thrown. */
export async function startAgent(
  kernel: StartDeps,
  agent: LoadedAgent,
): Promise<{ started: boolean; startupTriggered: boolean }> {
  const runtime = kernel.runtime;
  if (typeof runtime.start !== 'function') return { started: false, startupTriggered: false };
  try {
    const startupTriggered = runtime.start(agent);
    agent.started = true;
    kernel.bus.emit('agent.started', { agentId: agent.id, payload: { startupTriggered } });
    await kernel.contributions.runLifecycle('started', agent.view());
    // Settled: what loading and starting read stays in the OS cache, not in this connection's.
    agent.file.releaseMemory();
    return { started: true, startupTriggered };
  } catch (error) {
    kernel.registry.log(agent, {
      level: 'error',
      origin: 'kernel',
      event: 'start_failed',
      message: `the agent could not be started: ${(error as Error).message}`,
    });
    return { started: false, startupTriggered: false };
  }
}
