/**
 * The adapter types this daemon knows: the shipped ones plus those other extensions add through the
 * `channels.adapter-types` point. Listeners hear every change so running agents pick up a type that
 * appears (or lose one that goes) without a restart.
 */
import { ADAPTER_TYPE_PATTERN, type AdapterType, type ChannelAdapterTypes } from './adapter.js';
import { duplicateAdapterType, malformedAdapterType } from './errors.js';

const NAME = new RegExp(ADAPTER_TYPE_PATTERN);

export class AdapterTypeRegistry implements ChannelAdapterTypes {
  private readonly types = new Map<string, AdapterType>();
  private readonly listeners = new Set<() => void>();

  add(type: AdapterType): () => void {
    if (
      !type ||
      typeof type.type !== 'string' ||
      !NAME.test(type.type) ||
      typeof type.create !== 'function' ||
      !type.limits ||
      !(type.limits.maxTextLength >= 1)
    ) {
      throw malformedAdapterType(type?.type);
    }
    if (this.types.has(type.type)) throw duplicateAdapterType(type.type);
    this.types.set(type.type, type);
    this.changed();
    let removed = false;
    return () => {
      if (removed || this.types.get(type.type) !== type) return;
      removed = true;
      this.types.delete(type.type);
      this.changed();
    };
  }

  list(): string[] {
    return [...this.types.keys()].sort();
  }

  get(name: string): AdapterType | undefined {
    return this.types.get(name);
  }

  all(): AdapterType[] {
    return this.list().map((name) => this.types.get(name)!);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}
