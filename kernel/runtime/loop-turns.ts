/**
 * The executor of one of an agent's loops, given its turn runner: each turn reads the agent's model,
 * instructions and tools for that loop when it starts (a replaced config applies to the next turn),
 * recalls long-term memory when the daemon has it, and asks the owner through the agent's HIL store.
 */
import type { EventPayloads, EventType, TriggerType } from '@agt/contracts';
import type { EmitOptions } from './agent-events.js';
import { LoopExecutor } from './executor/loop-executor.js';
import { loopInstructions, loopModel, loopTools } from './executor/loop-setup.js';
import { runTurn } from './executor/turn.js';
import type { HilStore } from './hil.js';
import type { RuntimeDeps } from './runtime-deps.js';
import type { TriggerOrigin } from './triggers/evaluator.js';
import { limitOf, type LogFields, type RuntimeAgent } from './types.js';

/** What a loop's turns need of the agent's runtime (AgentRuntime gives it). */
export interface LoopTurnsHost {
  readonly agent: RuntimeAgent;
  readonly deps: RuntimeDeps;
  readonly hil: HilStore;
  emit<T extends EventType>(type: T, payload: EventPayloads[T], options?: EmitOptions): void;
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: LogFields): void;
  fire(type: TriggerType, data: unknown, origin?: TriggerOrigin): number;
}

export function loopExecutor(host: LoopTurnsHost, name: string): LoopExecutor {
  const { agent, deps } = host;
  return new LoopExecutor(name, {
    emit: (type, payload, options) => host.emit(type, payload, options),
    log: (level, message, data) => host.log(level, message, { loop: name, data }),
    turnTimeoutMs: () => limitOf(agent.config, 'turn_timeout_ms'),
    runTurn: ({ loop, head, control }) =>
      runTurn({
        agent,
        loop,
        turnId: head.turnId,
        head,
        signal: control.signal,
        setState: control.setState,
        absorb: control.absorb,
        arrivals: control.arrivals,
        emit: (type, payload) => host.emit(type, payload, { loop, turnId: head.turnId }),
        log: (level, message, data) => host.log(level, message, { loop, turnId: head.turnId, data }),
        fire: (type, data) => host.fire(type, data, { loop, turnId: head.turnId }),
        model: () => loopModel(agent, deps, loop),
        system: () => loopInstructions(agent, loop),
        ...(deps.memory
          ? {
              recall: (input: string) =>
                deps.memory!.recall(agent, input, { loop, turnId: head.turnId, signal: control.signal }),
            }
          : {}),
        tools: () => loopTools(agent, deps, loop),
        ...(deps.toolTrace
          ? {
              toolTrace: (callId: string, tool: string) =>
                deps.toolTrace!({ agentId: agent.id, turnId: head.turnId, callId, tool }),
            }
          : {}),
        hil: host.hil,
        clock: deps.clock,
        logger: deps.logger,
      }),
  });
}
