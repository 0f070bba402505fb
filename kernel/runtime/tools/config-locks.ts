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
 * - any top-level field named in `locked_fields`;
 * - a tool declaration with `locked: true` (kept as it is, and not removed), nor set `locked` itself;
 * - a trigger target with `locked: true` (kept as it is in its trigger), nor add locked targets.
 */
import type { AgentConfig, TriggerTarget } from '../../../contracts/agent-config.js';
import { UNLOCKABLE_AGENT_FIELDS } from '../../../contracts/settings.js';
import { ownerLockRefusal } from './errors.js';

/** Never the agent's: identity and the lock list itself. */
const ALWAYS_OWNER = ['id', 'agt_version', 'locked_fields', 'budget'];

/** Fields the agent's own tools may not change unless the owner unlocks them (settings `agentConfigUnlocks`). */
export const OWNER_ONLY_FIELDS: readonly string[] = [...ALWAYS_OWNER, ...UNLOCKABLE_AGENT_FIELDS];

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The merged config, or `forbidden` naming the first lock the patch breaks. `current` is the file's own
 * config (not the capped one); `unlocked` the fields the owner unlocked for this agent.
 */
export function applyAgentPatch(current: AgentConfig, patch: Record<string, unknown>, unlocked: readonly string[] = []): AgentConfig {
  const open = new Set(unlocked.filter((field) => (UNLOCKABLE_AGENT_FIELDS as readonly string[]).includes(field)));
  const locked = new Set([...OWNER_ONLY_FIELDS.filter((field) => !open.has(field)), ...(current.locked_fields ?? [])]);
  for (const key of Object.keys(patch)) {
    if (locked.has(key) && !same(patch[key], (current as Record<string, unknown>)[key])) {
      const how = open.has(key) || !(UNLOCKABLE_AGENT_FIELDS as readonly string[]).includes(key) ? '' : ` (the owner can unlock it for this agent in settings agentConfigUnlocks)`;
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
        if (!after?.targets?.some((t) => same(t, target))) throw ownerLockRefusal(`a locked ${type} target cannot be changed or removed`);
      }
    }
    for (const [type, trigger] of Object.entries(next.triggers as Record<string, { targets?: TriggerTarget[] } | undefined>)) {
      const before = lockedTargets((current.triggers as Record<string, { targets?: TriggerTarget[] } | undefined>)[type]?.targets);
      for (const target of lockedTargets(trigger?.targets)) {
        if (!before.some((t) => same(t, target))) throw ownerLockRefusal(`only the owner locks ${type} targets`);
      }
    }
  }
  return next;
}
