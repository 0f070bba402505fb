/**
 * The write side of the Loops route group: create, patch and delete inner loops. Declarations go
 * through the agent's loop pool (services/runtime/loops/declaration.ts: validation, tool attenuation,
 * owner lock, cap) and are persisted with `registry.updateConfig` (config `loops`), which carries the
 * review mark and applies the change to the running agent at once.
 */
import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import { LOOP_NAME_PATTERN, ModelConfig } from '../agents/config-schema.js';
import { type AgentConfig, type LoopConfig, AgentIdParams, errorResponses } from '@agt/contracts';
import type { TriggerEvent } from '../runtime/dispatch.js';
import type { AgentRuntime } from '../runtime/agent-runtime.js';
import {
  agentToolDefinitions,
  createLoop,
  declaredLoop,
  LoopPatchBody,
  MAX_INNER_LOOPS,
  patchLoop,
  removeLoop,
} from '../runtime/loops/declaration.js';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import type { KernelServices } from '../services.js';
import type { KernelRoutes } from './plugin.js';
import { describeLoop, LoopItem } from './loops.js';

/** The kernel services this route group uses. */
type Uses = 'builtinTools' | 'contributions' | 'registry' | 'runtime';

const TAGS = ['Loops'];
const LoopParams = Type.Intersect([AgentIdParams, Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) })]);

const Kickoff = Type.Union([
  Type.Null(),
  Type.Object({
    delivered: Type.Boolean(),
    woke: Type.Boolean(),
    reason: Type.Optional(Type.String()),
    turnId: Type.Optional(Type.String()),
  }),
]);

const LoopRecord = Type.Intersect([
  Type.Object({ agentId: Type.String(), excludedTools: Type.Array(Type.String()) }),
  LoopItem,
]);

const CreateBody = Type.Object(
  {
    name: Type.String({ description: `pattern ${LOOP_NAME_PATTERN}; \`main\` is 409` }),
    goal: Type.String({ minLength: 1 }),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    autostart: Type.Optional(Type.Boolean({ default: true })),
    autonomous: Type.Optional(Type.Boolean()),
    model: Type.Optional(Type.Partial(ModelConfig)),
    compact_threshold: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    tools: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'absolute allow-list intersected with the host’s enabled tools; default loop_send, loop_list, sys_set_state (those the host grants)',
      }),
    ),
  },
  { additionalProperties: false },
);

async function definitionsOf(services: Pick<KernelServices, Uses>, agent: LoadedAgent) {
  return agentToolDefinitions(
    services.builtinTools,
    (id, taken) => services.contributions.toolsFor(id, taken),
    agent.id,
  );
}

/**
 * Starts an enabled autostart loop at once by delivering its goal as a first message (a `loop_send`
 * trigger turn from the owner). Not delivered while the agent is `off` or `suspended`.
 */
function kickoff(runtime: AgentRuntime | undefined, loop: LoopConfig) {
  if (!loop.enabled || loop.autostart === false) return null;
  if (!runtime) return { delivered: false, woke: false, reason: 'the agent is not running' };
  if (runtime.displayState === 'off' || runtime.displayState === 'suspended') {
    return { delivered: false, woke: false, reason: `the agent is ${runtime.displayState}` };
  }
  try {
    const executor = runtime.loop(loop.name);
    const woke = !executor.running && !executor.held;
    const turnId = randomUUID();
    const now = Date.now();
    const event: TriggerEvent = {
      id: randomUUID(),
      type: 'inbox',
      source: 'api',
      time: new Date(now).toISOString(),
      data: { text: loop.goal, from: 'owner', kickoff: true },
    };
    executor.enqueue({ kind: 'trigger', turnId, trigger: 'loop_send', events: [event], count: 1, at: now });
    return { delivered: true, woke, turnId };
  } catch (error) {
    return { delivered: false, woke: false, reason: (error as Error).message };
  }
}

export const loopWriteRoutes: KernelRoutes<Uses> = async (app, { services }) => {
  const service = services.runtime;

  app.post(
    '/loops',
    {
      schema: {
        tags: TAGS,
        summary: 'Create an inner loop (201); an enabled autostart loop is started at once with its goal',
        description: `Defaults: enabled true, autostart true, tools loop_send, loop_list, sys_set_state filtered to what the host grants. 400 invalid declaration (bad name, unknown or never-grantable tool such as sys_update_config); 409 for main, a duplicate name, the cap of ${MAX_INNER_LOOPS} inner loops, or \`locked_fields\` containing \`loops\`. \`excludedTools\`: requested tools the host has disabled (granted once enabled). \`kickoff\`: null, or whether the goal was delivered as a first message and woke the loop.`,
        params: AgentIdParams,
        body: CreateBody,
        response: { 201: Type.Intersect([LoopRecord, Type.Object({ kickoff: Kickoff })]), ...errorResponses(404, 409) },
      },
    },
    async (request, reply) => {
      const agent = services.registry.resolve(request.params.id);
      const definitions = await definitionsOf(services, agent);
      // Read, check and write without an await in between: two creates cannot both pass the checks.
      const change = createLoop(agent.config as AgentConfig, request.body, definitions);
      await services.registry.updateConfig(agent, change.config);
      const started = kickoff(service.byId(agent.id), change.loop);
      reply.status(201);
      return {
        agentId: agent.id,
        ...describeLoop(services, agent, change.loop.name),
        excludedTools: change.excludedTools,
        kickoff: started,
      };
    },
  );

  app.patch(
    '/loops/:name',
    {
      schema: {
        tags: TAGS,
        summary: 'Change an inner loop: present keys replace wholesale; null removes an override',
        description:
          'At least one of goal, enabled, autostart, autonomous, model (object or null), compact_threshold (integer or null), tools, params, provider_params (the last two patch the loop’s model override). An empty patch is 400; main is 409; loops cannot be renamed. `enabled: false` aborts and flushes a running turn at once (`agent.error` `loop_disabled`).',
        params: LoopParams,
        body: LoopPatchBody,
        response: { 200: LoopRecord, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = services.registry.resolve(request.params.id);
      declaredLoop(agent.config as AgentConfig, request.params.name, 'patched');
      const definitions = await definitionsOf(services, agent);
      const change = patchLoop(agent.config as AgentConfig, request.params.name, request.body, definitions);
      await services.registry.updateConfig(agent, change.config);
      return {
        agentId: agent.id,
        ...describeLoop(services, agent, change.loop.name),
        excludedTools: change.excludedTools,
      };
    },
  );

  app.delete(
    '/loops/:name',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete an inner loop: its stream is archived to agt_audit under loop:<name>',
        description:
          'The loop is stopped at once (running turn aborted, queue discarded), its `agt_loop` rows are archived to `agt_audit` (kind `loop_row`, subject `loop:<name>`, one record per row) and removed, and its timers are dropped except owner-locked ones. 409 for main; 404 unknown.',
        params: LoopParams,
        response: {
          200: Type.Object({
            agentId: Type.String(),
            deleted: Type.String(),
            archivedRows: Type.Integer(),
            droppedTimers: Type.Integer(),
          }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const agent = services.registry.resolve(request.params.id);
      const name = request.params.name;
      const next = removeLoop(agent.config as AgentConfig, name);
      const runtime = service.byId(agent.id);
      const executor = runtime?.existingLoop(name);
      await services.registry.updateConfig(agent, next);
      // The config change stopped the loop; wait until its turn has really ended before archiving.
      await executor?.stop(0, 'disabled');
      const file = agent.file;
      const droppedTimers = file.timers.deleteForLoop(name);
      const archivedRows = file.transaction(() => {
        const rows = file.loop.list(name);
        for (const row of rows) file.audit.append('loop_row', `loop:${name}`, row);
        file.loop.clear(name);
        return rows.length;
      });
      return { agentId: agent.id, deleted: name, archivedRows, droppedTimers };
    },
  );
};
