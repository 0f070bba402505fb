/** What one agent's runtime needs from the kernel: a narrow view, so tests can fake it. */
import type {
  AgentConfig,
  CommandOutcome,
  CommandRun,
  EmitInput,
  EventBus,
  EventType,
  Logger,
  OutboundEnvelope,
  OutboundReport,
  ToolCallTrace,
} from '@agt/contracts';
import type { FrameOrigin } from '../events/bus.js';
import type { OutboundSending } from '../extensions/kernel-points.js';
import type { MemoryService } from '../memory/service.js';
import type { Clock } from './clock.js';
import type { LoopSources } from './executor/loop-setup.js';
import type { HostCommandRunner } from './sandbox/command-runner.js';

export interface RuntimeDeps extends LoopSources {
  bus: EventBus;
  logger: Logger;
  clock: Clock;
  /** Validates, commits and applies a new config (the registry's update path). */
  updateConfig(agentId: string, next: AgentConfig): Promise<void>;
  /**
   * Calls `done(true)` once everything emitted so far was written to every open event stream, in the
   * tick of that write; `done(false)` when the streams closed first (the kernel bus's `whenSent`).
   * Absent: an event counts as sent once emitted.
   */
  whenSent?(done: (sent: boolean) => void): void;
  /**
   * The kernel bus's frame places: where the next frame goes, and an emit of an event that earlier runs
   * emitted at `repeats` (a turn's end re-emitted after a restart; see FrameOrigin in events/bus.ts).
   * Absent: ends are recorded and re-emitted without them.
   */
  frames?: {
    nextOrigin(): FrameOrigin;
    emitRepeat<T extends EventType>(type: T, input: EmitInput<T>, repeats: readonly FrameOrigin[]): void;
  };
  /**
   * The delivery by the message carrier that takes the envelope, else the outbound transport that claims its
   * address; undefined when none does. A promise while carriers decide (kernel/extensions/kernel-points.ts).
   */
  sendOutbound?(
    envelope: OutboundEnvelope,
    report: OutboundReport,
  ): OutboundSending | Promise<OutboundSending | undefined> | undefined;
  /** A running tool call's traceparent from the `traceContext` provider (`ToolContext.trace`); undefined: none. */
  toolTrace?(call: ToolCallTrace): string | undefined;
  /** System-scope commands through the command executor an extension offers (compute); undefined: the host runner. */
  executeCommand?(run: CommandRun): Promise<CommandOutcome | undefined>;
  /** The daemon's host command runner: system-scope commands no extension executes. */
  hostCommands: HostCommandRunner;
  /** Long-term memory (docs/memory.md): the memory tools, recall before a turn, capture at compaction. */
  memory?: MemoryService;
}
