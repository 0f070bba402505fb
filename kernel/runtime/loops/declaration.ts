/**
 * The agent's loop pool: creating, patching and removing inner-loop declarations (`config.loops`).
 * One set of rules for every caller (the Loops routes, and any loop-management tool):
 *
 * - names follow `LOOP_NAME_PATTERN`; `main` is implicit and cannot be declared, patched or removed
 *   (409); a duplicate name and more than {@link MAX_INNER_LOOPS} inner loops are 409;
 * - `locked_fields` containing `loops` is an owner lock: creating a loop is refused (409);
 * - tool attenuation: `tools` is an absolute allow-list intersected with what the host (main) has
 *   enabled. Every requested name must be a tool the agent knows (built-in or contributed), else 400;
 *   {@link NEVER_GRANTABLE} tools are refused (400). Known tools the host has disabled are accepted
 *   and reported as `excludedTools`: they are granted once the host enables them. Without `tools` a new
 *   loop gets {@link DEFAULT_INNER_LOOP_TOOLS} filtered to what the host grants now.
 */
import { Type } from 'typebox';
import { LoopConfig, LOOP_NAME_PATTERN, ModelConfig } from '../../agents/config-schema.js';
import { type AgentConfig, type ToolDefinition, firstSchemaError } from '@agt/contracts';
import {
  emptyLoopPatch,
  invalidLoopDeclaration,
  loopExists,
  loopsLocked,
  mainIsImplicit,
  mainNotEditable,
  neverGrantableTools,
  noSuchLoop,
  tooManyLoops,
  unknownLoopTools,
} from '../errors.js';
import { DEFAULT_INNER_LOOP_TOOLS, effectiveTools } from '../tools/effective.js';

/** At most this many inner loops per agent (`main` not counted). */
export const MAX_INNER_LOOPS = 8;

/**
 * Tools an inner loop can never be granted: an inner loop never rewrites the agent's own config (that
 * stays with main, under the owner's locks).
 */
export const NEVER_GRANTABLE = ['sys_update_config'];

const NAME = new RegExp(LOOP_NAME_PATTERN);

/** The tool definitions an agent knows: built-ins first, then contributed tools (MCP, extensions). */
export async function agentToolDefinitions(
  builtins: ToolDefinition[],
  contributed: (agentId: string, taken: ReadonlySet<string>) => Promise<ToolDefinition[]>,
  agentId: string,
): Promise<ToolDefinition[]> {
  return [...builtins, ...(await contributed(agentId, new Set(builtins.map((tool) => tool.name))))];
}

/** Names of the tools the host (main) has enabled. */
export function hostEnabled(config: AgentConfig, definitions: ToolDefinition[]): Set<string> {
  return new Set(
    effectiveTools(config, definitions, 'main')
      .filter((tool) => tool.enabled)
      .map((tool) => tool.def.name),
  );
}

/** 400 for a requested tool the agent does not know or a loop may never hold; returns the excluded ones. */
export function checkLoopTools(
  tools: string[],
  config: AgentConfig,
  definitions: ToolDefinition[],
): { excluded: string[] } {
  const known = new Set(definitions.map((tool) => tool.name));
  const unknown = tools.filter((name) => !known.has(name));
  if (unknown.length > 0) throw unknownLoopTools(unknown);
  const never = tools.filter((name) => NEVER_GRANTABLE.includes(name));
  if (never.length > 0) throw neverGrantableTools(never);
  const enabled = hostEnabled(config, definitions);
  return { excluded: [...new Set(tools.filter((name) => !enabled.has(name)))] };
}

function validDeclaration(loop: LoopConfig): LoopConfig {
  const problem = firstSchemaError(LoopConfig, loop);
  if (problem !== null) throw invalidLoopDeclaration(problem);
  return loop;
}

export interface LoopCreateInput {
  name: string;
  goal: string;
  enabled?: boolean;
  autostart?: boolean;
  autonomous?: boolean;
  model?: Record<string, unknown>;
  compact_threshold?: number | null;
  tools?: string[];
}

export interface PoolChange {
  config: AgentConfig;
  loop: LoopConfig;
  excludedTools: string[];
}

/** The config with a new inner loop (nothing is written). 400 invalid, 409 main/duplicate/cap/lock. */
export function createLoop(config: AgentConfig, input: LoopCreateInput, definitions: ToolDefinition[]): PoolChange {
  if (!NAME.test(input.name)) throw invalidLoopDeclaration(`name must match ${LOOP_NAME_PATTERN}`);
  if (input.name === 'main') throw mainIsImplicit();
  if ((config.locked_fields ?? []).includes('loops')) throw loopsLocked();
  const loops = config.loops ?? [];
  if (loops.some((loop) => loop.name === input.name)) throw loopExists(input.name);
  if (loops.length >= MAX_INNER_LOOPS) throw tooManyLoops(MAX_INNER_LOOPS);
  const enabled = hostEnabled(config, definitions);
  let tools: string[];
  let excludedTools: string[] = [];
  if (input.tools === undefined) {
    tools = DEFAULT_INNER_LOOP_TOOLS.filter((name) => enabled.has(name));
  } else {
    tools = [...new Set(input.tools)];
    excludedTools = checkLoopTools(tools, config, definitions).excluded;
  }
  const loop = validDeclaration({
    name: input.name,
    goal: input.goal,
    enabled: input.enabled ?? true,
    autostart: input.autostart ?? true,
    ...(input.autonomous !== undefined ? { autonomous: input.autonomous } : {}),
    ...(input.model !== undefined ? { model: input.model } : {}),
    ...(input.compact_threshold !== undefined && input.compact_threshold !== null
      ? { compact_threshold: input.compact_threshold }
      : {}),
    tools,
  } as LoopConfig);
  return { config: { ...config, loops: [...loops, loop] }, loop, excludedTools };
}

/** Keys a loop patch may carry (`params` / `provider_params` patch the loop's model override). */
export const PATCH_KEYS = [
  'goal',
  'enabled',
  'autostart',
  'autonomous',
  'model',
  'compact_threshold',
  'tools',
  'params',
  'provider_params',
] as const;

export const LoopPatchBody = Type.Object(
  {
    goal: Type.Optional(Type.String({ minLength: 1 })),
    enabled: Type.Optional(Type.Boolean()),
    autostart: Type.Optional(Type.Boolean()),
    autonomous: Type.Optional(Type.Boolean()),
    model: Type.Optional(Type.Union([Type.Partial(ModelConfig), Type.Null()])),
    compact_threshold: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    tools: Type.Optional(Type.Array(Type.String())),
    params: Type.Optional(Type.Union([ModelConfig.properties.params, Type.Null()])),
    provider_params: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
  },
  { additionalProperties: false },
);

export type LoopPatch = Partial<Record<(typeof PATCH_KEYS)[number], unknown>>;

/** 404 for an unknown inner loop, 409 for main; the declaration otherwise. */
export function declaredLoop(config: AgentConfig, name: string, what: string): LoopConfig {
  if (name === 'main') throw mainNotEditable(what);
  const loop = config.loops?.find((candidate) => candidate.name === name);
  if (!loop) throw noSuchLoop(config.name, name);
  return loop;
}

/**
 * The config with one inner loop patched: present keys replace wholesale; `model`, `compact_threshold`,
 * `params` and `provider_params` set to null remove the override (the loop inherits main's). `params`
 * and `provider_params` apply to the loop's model override, after `model`. Empty patch 400.
 */
export function patchLoop(
  config: AgentConfig,
  name: string,
  patch: LoopPatch,
  definitions: ToolDefinition[],
): PoolChange {
  const keys = PATCH_KEYS.filter((key) => patch[key] !== undefined);
  if (keys.length === 0) throw emptyLoopPatch(PATCH_KEYS);
  const current = declaredLoop(config, name, 'patched');
  const next: Record<string, unknown> = { ...current };
  for (const key of ['goal', 'enabled', 'autostart', 'autonomous', 'tools'] as const)
    if (patch[key] !== undefined) next[key] = patch[key];
  if (patch.compact_threshold === null) delete next.compact_threshold;
  else if (patch.compact_threshold !== undefined) next.compact_threshold = patch.compact_threshold;
  if (patch.model === null) delete next.model;
  else if (patch.model !== undefined) next.model = patch.model;
  for (const key of ['params', 'provider_params'] as const) {
    if (patch[key] === undefined) continue;
    const model = { ...((next.model as Record<string, unknown> | undefined) ?? {}) };
    if (patch[key] === null) delete model[key];
    else model[key] = patch[key];
    if (Object.keys(model).length > 0) next.model = model;
    else delete next.model;
  }
  let excludedTools: string[] = [];
  if (Array.isArray(next.tools)) {
    next.tools = [...new Set(next.tools as string[])];
    // Only a patch that names tools is checked against the catalogue (a stored list may name an MCP
    // tool whose server is down right now).
    excludedTools =
      patch.tools !== undefined
        ? checkLoopTools(next.tools as string[], config, definitions).excluded
        : excludedOf(config, next.tools as string[], definitions);
  }
  const loop = validDeclaration(next as LoopConfig);
  return {
    config: { ...config, loops: (config.loops ?? []).map((l) => (l.name === name ? loop : l)) },
    loop,
    excludedTools,
  };
}

/** Requested tools of a declaration the host has disabled (or does not offer now). */
export function excludedOf(config: AgentConfig, tools: string[] | undefined, definitions: ToolDefinition[]): string[] {
  if (!tools) return [];
  const enabled = hostEnabled(config, definitions);
  return tools.filter((name) => !enabled.has(name));
}

/** The config without one inner loop. 404 unknown, 409 main. */
export function removeLoop(config: AgentConfig, name: string): AgentConfig {
  declaredLoop(config, name, 'deleted');
  return { ...config, loops: (config.loops ?? []).filter((loop) => loop.name !== name) };
}
