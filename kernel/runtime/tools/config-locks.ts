/**
 * Owner locks on the agent's own config changes (`sys_update_config`). The owner's `PUT config` route is
 * never bound by them. The agent may not change:
 * - the fields the owner always keeps: `id`, `agt_version`, `locked_fields`, `budget` (an agent must not
 *   raise its own spend limits, docs/costs.md);
 * - the privilege-bearing fields (`mcp`: servers and their variables; `security`: fetch hosts,
 *   unsandboxed commands, compute tier and network; `limits`; `serving`; `adapters`: channels;
 *   `providers`; `ws_connections`), unless the owner unlocks one for this agent in settings
 *   `agentConfigUnlocks` (a daemon setting, so no agent file can unlock itself; the owner's ceiling and
 *   the mcp extension's `allowAgentEnv` still cap what an unlocked field grants);
 * - the provider it runs on: `model.provider` and a loop's `model.provider` may name only providers its
 *   config already names or the owner allows for it (settings `agentCeilings.<id>.providers`); which
 *   provider is which key and which bill, while the model id within a provider stays the agent's;
 * - the command targets of its triggers, unless the owner unlocks `triggers`: a command runs on the host
 *   (sandboxed, but a capability), so after the change every command target of an enabled trigger must
 *   be one that was already there, identical, in an enabled trigger of the same type. Removing or
 *   disabling one is allowed (it narrows; the owner keeps one with `locked: true`); agent-scope and
 *   lambda targets (the agent's own loops and QuickJS code) stay the agent's;
 * - any top-level field named in `locked_fields`;
 * - a tool declaration with `locked: true` (kept as it is, and not removed), nor set `locked` itself;
 * - a trigger target with `locked: true` (kept as it is in its trigger), nor add locked targets.
 */
import { type AgentConfig, type TriggerTarget, UNLOCKABLE_AGENT_FIELDS } from '@agt/contracts';
import { ownerLockRefusal } from './errors.js';

/** Never the agent's: identity and the lock list itself. */
const ALWAYS_OWNER = ['id', 'agt_version', 'locked_fields', 'budget'];

/** Unlockable fields of which only a part is locked (see the header): they are not locked whole. */
const PARTLY_LOCKED: readonly string[] = ['triggers'];

/** Fields the agent's own tools may not change unless the owner unlocks them (settings `agentConfigUnlocks`). */
export const OWNER_ONLY_FIELDS: readonly string[] = [
  ...ALWAYS_OWNER,
  ...UNLOCKABLE_AGENT_FIELDS.filter((field) => !PARTLY_LOCKED.includes(field)),
];

/** What the owner's settings allow this agent beyond the locks. */
export interface OwnerAllowances {
  /** Fields unlocked for this agent (settings `agentConfigUnlocks`). */
  unlocked?: readonly string[];
  /** Provider ids it may move to (settings `agentCeilings.<id>.providers`, resolved by `ceilingFor`). */
  providers?: readonly string[];
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** JSON with object keys sorted, so a target restated in another key order is the same target. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The merged config, or `forbidden` naming the first lock the patch breaks. `current` is the file's own
 * config (not the capped one).
 */
export function applyAgentPatch(
  current: AgentConfig,
  patch: Record<string, unknown>,
  allowed: OwnerAllowances = {},
): AgentConfig {
  const open = new Set(
    (allowed.unlocked ?? []).filter((field) => (UNLOCKABLE_AGENT_FIELDS as readonly string[]).includes(field)),
  );
  const locked = new Set([...OWNER_ONLY_FIELDS.filter((field) => !open.has(field)), ...(current.locked_fields ?? [])]);
  for (const key of Object.keys(patch)) {
    if (locked.has(key) && !same(patch[key], (current as Record<string, unknown>)[key])) {
      const how =
        open.has(key) || !(UNLOCKABLE_AGENT_FIELDS as readonly string[]).includes(key)
          ? ''
          : ` (the owner can unlock it for this agent in settings agentConfigUnlocks)`;
      throw ownerLockRefusal(`${key} is locked by the owner${how}`);
    }
  }
  const next = { ...current, ...patch } as AgentConfig;

  if ('tools' in patch && Array.isArray(next.tools)) {
    for (const decl of current.tools.filter((d) => d.locked)) {
      const kept = next.tools.find((d) => d.name === decl.name);
      if (!kept || !same(kept, decl)) throw ownerLockRefusal(`tool ${decl.name} is locked`);
    }
    for (const decl of next.tools) {
      const before = current.tools.find((d) => d.name === decl.name);
      if (decl.locked && !before?.locked) throw ownerLockRefusal(`only the owner locks tool ${decl.name}`);
    }
  }

  if ('triggers' in patch && typeof next.triggers === 'object' && next.triggers !== null) {
    const lockedTargets = (targets: TriggerTarget[] | undefined) => (targets ?? []).filter((t) => t.locked);
    for (const [type, trigger] of Object.entries(current.triggers ?? {})) {
      const after = (next.triggers as Record<string, { targets?: TriggerTarget[] } | undefined>)[type];
      for (const target of lockedTargets(trigger?.targets)) {
        if (!after?.targets?.some((t) => same(t, target)))
          throw ownerLockRefusal(`a locked ${type} target cannot be changed or removed`);
      }
    }
    for (const [type, trigger] of Object.entries(
      next.triggers as Record<string, { targets?: TriggerTarget[] } | undefined>,
    )) {
      const before = lockedTargets(
        (current.triggers as Record<string, { targets?: TriggerTarget[] } | undefined>)[type]?.targets,
      );
      for (const target of lockedTargets(trigger?.targets)) {
        if (!before.some((t) => same(t, target))) throw ownerLockRefusal(`only the owner locks ${type} targets`);
      }
    }
    if (!open.has('triggers')) assertNoNewCommandTargets(current, next);
  }

  if ('model' in patch || 'loops' in patch) assertProvidersAllowed(current, next, allowed.providers ?? []);
  return next;
}

type TriggerMap = Record<string, { enabled?: unknown; targets?: unknown } | undefined>;

/** The command targets of enabled triggers, as `type canonical-target` with how often each occurs. */
function liveCommandTargets(config: AgentConfig): Map<string, number> {
  const out = new Map<string, number>();
  for (const [type, trigger] of Object.entries((config.triggers ?? {}) as TriggerMap)) {
    if (trigger?.enabled !== true || !Array.isArray(trigger.targets)) continue;
    for (const target of trigger.targets as unknown[]) {
      // Any target carrying `command` counts, whatever its scope or lambda: an allow-list of the
      // targets that never run a command, not a guess at which ones do.
      if (target === null || typeof target !== 'object' || !('command' in target)) continue;
      const key = `${type} ${canonical(target)}`;
      out.set(key, (out.get(key) ?? 0) + 1);
    }
  }
  return out;
}

function assertNoNewCommandTargets(current: AgentConfig, next: AgentConfig): void {
  const before = liveCommandTargets(current);
  for (const [key, count] of liveCommandTargets(next)) {
    if (count > (before.get(key) ?? 0)) {
      const type = key.slice(0, key.indexOf(' '));
      throw ownerLockRefusal(
        `triggers.${type}: command targets are locked by the owner; a change may remove or disable one, not add, change or enable one (the owner can unlock triggers for this agent in settings agentConfigUnlocks)`,
      );
    }
  }
}

/** Where a config names a provider: `model.provider` and each loop's `model.provider`. */
function providersNamed(config: AgentConfig): Array<{ field: string; provider: string }> {
  const out: Array<{ field: string; provider: string }> = [];
  const provider = (config.model as { provider?: unknown } | undefined)?.provider;
  if (typeof provider === 'string') out.push({ field: 'model.provider', provider });
  for (const loop of Array.isArray(config.loops) ? config.loops : []) {
    const own = (loop?.model as { provider?: unknown } | undefined)?.provider;
    if (typeof own === 'string') out.push({ field: `loops.${String(loop.name)}.model.provider`, provider: own });
  }
  return out;
}

function assertProvidersAllowed(current: AgentConfig, next: AgentConfig, allowed: readonly string[]): void {
  const known = new Set([...providersNamed(current).map((p) => p.provider), ...allowed]);
  for (const { field, provider } of providersNamed(next)) {
    if (!known.has(provider)) {
      throw ownerLockRefusal(
        `${field} is locked by the owner: this agent may not move to provider ${JSON.stringify(provider)} (the model id within its provider is its own; the owner can allow providers for this agent in settings agentCeilings.<agent id>.providers)`,
      );
    }
  }
}
