/** `ask` (wait for the owner's answer) and `say` (speak to the owner without ending the turn). */
import { Type } from 'typebox';
import type { ToolDefinition } from '@agt/contracts';
import { builtin, type RuntimeLookup } from './define.js';

export function hilTools(lookup: RuntimeLookup): ToolDefinition[] {
  return [
    builtin(
      {
        name: 'ask',
        description: 'Ask the owner a question and wait for the answer (the loop waits in awaiting_ask).',
        input: Type.Object({ question: Type.String({ minLength: 1, maxLength: 4000 }) }),
        async run(runtime, { question }, context) {
          const loop = runtime.existingLoop(context.loop);
          loop?.setState('awaiting_ask');
          try {
            const { answer, fromCaller } = await runtime.hil.ask({
              question,
              loop: context.loop,
              turnId: context.turnId ?? null,
              callId: context.callId,
              signal: context.signal,
            });
            // An answer from the sender of the turn's message (an A2A caller) is never passed off as the owner's.
            return fromCaller
              ? `The sender of the message this turn answers (not the owner) answered: ${answer}`
              : `The owner answered: ${answer}`;
          } finally {
            if (!context.signal.aborted) loop?.setState('tool_use');
          }
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'say',
        description: 'Say something to the owner now, without ending the turn (emitted as an agent.said event).',
        input: Type.Object({ text: Type.String({ minLength: 1, maxLength: 20_000 }) }),
        run(runtime, { text }, context) {
          runtime.emit('agent.said', { text }, { loop: context.loop, turnId: context.turnId });
          return 'said';
        },
      },
      lookup,
    ),
  ];
}
