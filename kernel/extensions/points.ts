/**
 * Typed extension points (`ctx.provide`, `ctx.use`): who offers what on each point, the rules of its
 * `providers` mode, and who may use it. One instance per daemon (held by {@link Contributions}, so a
 * failed or stopped extension's offers are withdrawn with the rest of what it contributed).
 */
import type { ExtensionPoint, PointProviders } from '@agt/contracts';

export interface Provision<T> {
  /** The extension that offered it. */
  owner: string;
  value: T;
}

interface Slot {
  providers: PointProviders;
  provisions: Provision<unknown>[];
}

export class ExtensionPoints {
  private readonly slots = new Map<string, Slot>();

  /**
   * Records `owner`'s implementation. Throws (naming both extensions) when a `one` point already has a
   * provider, or when the point was provided elsewhere with another `providers` mode.
   */
  provide<T>(owner: string, point: ExtensionPoint<T>, value: T): void {
    const slot = this.slots.get(point.id) ?? { providers: point.providers, provisions: [] };
    if (slot.providers !== point.providers) {
      const other = slot.provisions[0]?.owner ?? 'another extension';
      throw new Error(
        `extension point ${point.id} takes ${slot.providers} provider(s) as ${other} offers it; ${owner} offers it with providers "${point.providers}"`,
      );
    }
    const first = slot.provisions[0];
    if (slot.providers === 'one' && first) {
      throw new Error(
        first.owner === owner
          ? `extension point ${point.id} takes one provider and ${owner} already provides it`
          : `extension point ${point.id} takes one provider: ${first.owner} provides it, so ${owner} cannot`,
      );
    }
    slot.provisions.push({ owner, value });
    this.slots.set(point.id, slot);
  }

  /** Every implementation of `point`, in the order they were offered (load order). */
  providers<T>(point: ExtensionPoint<T>): Provision<T>[] {
    return [...((this.slots.get(point.id)?.provisions ?? []) as Provision<T>[])];
  }

  /**
   * What `user` gets from `ctx.use(point)`: the offers of the extensions in its `dependsOn`. Throws,
   * naming `user` and the providers, when none of them offers it.
   */
  use<T>(user: string, dependsOn: readonly string[], point: ExtensionPoint<T>): T | readonly T[] {
    const all = this.providers(point);
    const visible = all.filter((p) => dependsOn.includes(p.owner));
    if (visible.length === 0) {
      const owners = [...new Set(all.map((p) => p.owner))].filter((owner) => owner !== user);
      if (owners.length === 0)
        throw new Error(`extension ${user} uses extension point ${point.id}, which no loaded extension provides`);
      const named = owners.join(', ');
      throw new Error(
        `extension ${user} uses extension point ${point.id}, provided by ${named}, without depending on it: add ${owners.length === 1 ? named : 'one of them'} to its dependsOn`,
      );
    }
    return point.providers === 'one' ? visible[0]!.value : Object.freeze(visible.map((p) => p.value));
  }

  /** Drops everything `owner` offered (it failed or stopped). */
  withdraw(owner: string): void {
    for (const [id, slot] of this.slots) {
      slot.provisions = slot.provisions.filter((p) => p.owner !== owner);
      if (slot.provisions.length === 0) this.slots.delete(id);
    }
  }
}
