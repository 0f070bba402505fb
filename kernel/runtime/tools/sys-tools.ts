/**
 * `sys_*` tools: meta (honouring protection), timers (the agent's own; locked ones stay), display
 * state (suspending asks the owner first), and the agent's config (read; update under owner locks).
 */
import { Type } from 'typebox';
import { MetaKey } from '../../http-api/names.js';
import type { ToolDefinition } from '@agt/contracts';
import { TimerMutationBody } from '../timers/schedule.js';
import { ceilingFor, unlocksFor } from '../../agents/ceiling.js';
import { applyAgentPatch } from './config-locks.js';
import { builtin, json, type RuntimeLookup } from './define.js';
import { noLoop, noMetaKey } from './errors.js';
import { fetchTool } from './fetch-tool.js';

/** The one meta-key rule (contracts/names.ts), shared with the meta routes. */
const Key = MetaKey;
const { locked: _locked, ...timerFields } = TimerMutationBody.properties;
const AgentTimerBody = Type.Object(timerFields, { additionalProperties: false });

export function sysTools(lookup: RuntimeLookup): ToolDefinition[] {
  const tools = [
    builtin(
      {
        name: 'sys_get_meta',
        description: 'Read one meta entry, or all of them without a key.',
        input: Type.Object({ key: Type.Optional(Key) }),
        run(runtime, { key }) {
          if (key === undefined) return json(runtime.agent.file.meta.list());
          const entry = runtime.agent.file.meta.get(key);
          if (!entry) throw noMetaKey(key);
          return json(entry);
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'sys_set_meta',
        description: 'Set a meta value (readonly keys refuse; increment keys only grow).',
        input: Type.Object({ key: Key, value: Type.String({ maxLength: 100_000 }) }),
        run(runtime, { key, value }) {
          return json(runtime.agent.file.meta.set(key, value, { actor: 'agent' }));
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'sys_delete_meta',
        description: 'Delete an unprotected meta key.',
        input: Type.Object({ key: Key }),
        run(runtime, { key }) {
          return runtime.agent.file.meta.delete(key, 'agent') ? `deleted ${key}` : `no meta key ${key}`;
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'sys_set_timer',
        description: 'Create a timer that wakes you (modes once_at, once_delay, interval, cron).',
        input: AgentTimerBody,
        run(runtime, body, context) {
          const loop = body.loop ?? (body.scope?.includes('agent') === false ? undefined : context.loop);
          if (loop !== undefined && !runtime.loopNames().includes(loop)) throw noLoop(loop);
          return json(runtime.timers.create({ ...body, ...(loop !== undefined ? { loop } : {}) }, 'agent'));
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'sys_list_timers',
        description: 'List your timers (expired ones too).',
        input: Type.Object({}),
        run: (runtime) => json(runtime.timers.list()),
      },
      lookup,
    ),
    builtin(
      {
        name: 'sys_delete_timer',
        description: 'Delete one of your timers (not the ones the owner locked).',
        input: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
        run(runtime, { id }) {
          return runtime.timers.delete(id, 'agent') ? `deleted timer ${id}` : `no timer ${id}`;
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'sys_set_state',
        description: 'Change your display state. Going to "suspended" asks the owner first and waits for the answer.',
        input: Type.Object({
          state: Type.Union(['active', 'idle', 'hibernate', 'suspended', 'off'].map((s) => Type.Literal(s))),
          reason: Type.Optional(Type.String({ maxLength: 2000 })),
        }),
        async run(runtime, { state, reason }, context) {
          if (state !== 'suspended') {
            runtime.setDisplayState(state as 'active');
            return `display state is now ${state}`;
          }
          const loop = runtime.existingLoop(context.loop);
          loop?.setState('suspended');
          try {
            const resume = await runtime.hil.suspend({
              reason: reason ?? 'the agent asked to suspend',
              loop: context.loop,
              turnId: context.turnId ?? null,
              callId: context.callId,
              signal: context.signal,
            });
            if (resume) return 'The owner resumed you: carry on.';
            runtime.setDisplayState('suspended');
            return 'The owner kept you suspended: end your turn now.';
          } finally {
            if (!context.signal.aborted) loop?.setState('tool_use');
          }
        },
      },
      lookup,
    ),
    builtin(
      {
        name: 'sys_get_config',
        description: 'Read your agent config.',
        input: Type.Object({}),
        run: (runtime) => json(runtime.agent.config),
      },
      lookup,
    ),
    builtin(
      {
        name: 'sys_update_config',
        description:
          'Change top-level fields of your config (owner-locked fields, locked tools, trigger command targets and a move to another provider refuse).',
        input: Type.Object({
          patch: Type.Object({}, { additionalProperties: true, description: 'top-level fields to replace' }),
        }),
        defaultEnabled: false,
        notable: true,
        async run(runtime, { patch }) {
          const agent = runtime.agent;
          const settings = agent.ownerSettings?.();
          const allowed = settings
            ? { unlocked: unlocksFor(settings, agent.id), providers: ceilingFor(settings, agent.id).providers }
            : {};
          const next = applyAgentPatch(agent.fileConfig ?? agent.config, patch as Record<string, unknown>, allowed);
          await runtime.updateConfig(next);
          return `updated ${Object.keys(patch).join(', ') || 'nothing'}`;
        },
      },
      lookup,
    ),
    fetchTool(lookup),
  ];
  return tools;
}
