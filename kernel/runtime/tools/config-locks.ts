/**
 * Owner locks on the agent's own config changes (`sys_update_config`). The owner's `PUT config` route is
 * never bound by them. The agent may not change:
 * - the fields the owner always keeps: `id`, `agt_version`, `locked_fields`, `security`, `limits`,
 *   `providers`;
 * - any top-level field named in `locked_fields`;
 * - a tool declaration with `locked: true` (kept as it is, and not removed), nor set `locked` itself;
 * - a trigger target with `locked: true` (kept as it is in its trigger), nor add locked targets.
 */
import type { AgentConfig, TriggerTarget } from '../../../contracts/agent-config.js';
import { ownerLockRefusal } from './errors.js';

export const OWNER_ONLY_FIELDS = ['id', 'agt_version', 'locked_fields', 'security', 'limits', 'providers'];

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The merged config, or `forbidden` naming the first lock the patch breaks. */
export function applyAgentPatch(current: AgentConfig, patch: Record<string, unknown>): AgentConfig {
  const locked = new Set([...OWNER_ONLY_FIELDS, ...(current.locked_fields ?? [])]);
  for (const key of Object.keys(patch)) {
    if (locked.has(key) && !same(patch[key], (current as Record<string, unknown>)[key])) throw ownerLockRefusal(`${key} is locked by the owner`);
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
