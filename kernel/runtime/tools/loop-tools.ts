/**
 * `loop_*` tools: talk to and tend the agent's other cognition loops. `loop_send` queues a message in
 * another loop as a trigger turn (source `loop:<from>`). `loop_compact` runs the same compaction as
 * `POST /agents/{id}/compact` on another loop (kernel/runtime/loops/compaction.ts).
 */
import { Type } from 'typebox';
import type { ToolDefinition } from '@agt/contracts';
import { compactLoop } from '../loops/compaction.js';
import { builtin, json, type RuntimeLookup } from './define.js';
import { cannotClearOwnLoop, cannotCompactOwnLoop, cannotSendToSelf } from './errors.js';

const LoopName = Type.String({ minLength: 1, maxLength: 32 });

export function loopTools(lookup: RuntimeLookup): ToolDefinition[] {
  return [
    builtin(
      {
        name: 'loop_send',
        description: 'Send a message to another of your loops; it wakes with it.',
        input: Type.Object({ loop: LoopName, text: Type.String({ minLength: 1, maxLength: 100_000 }) }),
        run(runtime, { loop, text }, context) {
          if (loop === context.loop) throw cannotSendToSelf();
          const turnId = runtime.sendToLoop(context.loop, loop, text);
          return `delivered to ${loop} (turn ${turnId})`;
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'loop_list',
        description: 'List your loops with their state and history size.',
        input: Type.Object({}),
        run(runtime) {
          return json(
            runtime.loopNames().map((name) => {
              const declared = runtime.agent.config.loops?.find((l) => l.name === name);
              return {
                name,
                enabled: declared?.enabled ?? true,
                goal: declared?.goal ?? null,
                state: runtime.existingLoop(name)?.state ?? 'idle',
                entryCount: runtime.agent.file.loop.count(name),
              };
            }),
          );
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'loop_clear',
        description: "Clear another loop's history (not your own, not while it runs).",
        input: Type.Object({ loop: LoopName }),
        run(runtime, { loop }, context) {
          if (loop === context.loop) throw cannotClearOwnLoop();
          return `cleared ${runtime.clearLoop(loop)} rows of ${loop}`;
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'loop_compact',
        description:
          "Summarize another loop's older history into one summary row to free its context (not your own loop, not while it runs).",
        input: Type.Object({ loop: Type.Optional(LoopName) }),
        async run(runtime, { loop }, context) {
          const target = loop ?? context.loop;
          if (target === context.loop) throw cannotCompactOwnLoop();
          const result = await compactLoop(runtime, target);
          return `compacted ${result.removed} rows of ${target} into a summary (${result.summaryChars} chars); kept the newest ${result.kept} rows`;
        },
      },
      lookup,
    ),
  ];
}
