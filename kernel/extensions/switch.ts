/**
 * `PATCH /runtime/extensions/{name}` (docs/extensions.md): the owner turns an extension off or on. The choice is
 * kept in the data directory's overlay (`extensions.config.json`, beside the owner's options; the shipped manifest
 * is never written) and wins over the manifest at every start. Off takes effect at once: the extension's `stop`
 * runs (it closes what it opened), what it contributed is withdrawn and its routes answer 503
 * `extension_unavailable`. On takes effect at the next start: fastify fixes the routes once the server listens,
 * so an extension's `register` (which adds its routes) cannot run later; the answer says `restartRequired`.
 */
import { conflict } from '@agt/contracts';
import { writeOverlayEnabled } from './config-overlay.js';
import { extensionNotInManifest } from './errors.js';
import type { ExtensionRegistry } from './registry.js';

export interface Switched {
  restartRequired: boolean;
}

const queues = new WeakMap<ExtensionRegistry, Promise<unknown>>();

/** One switch at a time per daemon: two must not interleave their overlay rewrites or stops. */
export function switchExtension(registry: ExtensionRegistry, name: string, enabled: boolean): Promise<Switched> {
  const next = (queues.get(registry) ?? Promise.resolve()).then(() => apply(registry, name, enabled));
  queues.set(
    registry,
    next.catch(() => {}),
  );
  return next;
}

async function apply(registry: ExtensionRegistry, name: string, enabled: boolean): Promise<Switched> {
  const record = registry.get(name);
  if (!record) throw extensionNotInManifest(name);
  const running = record.state === 'loaded' || record.state === 'started';
  if (!enabled) {
    // Turning off what another running extension needs would fail that one behind the owner's back.
    const needing = [...registry.records.values()].filter(
      (other) => (other.state === 'loaded' || other.state === 'started') && other.dependsOn.includes(name),
    );
    if (needing.length > 0)
      throw conflict(`${needing.map((other) => other.name).join(', ')} depend on ${name}: turn them off first`);
  }
  if (registry.overlayPath) writeOverlayEnabled(registry.overlayPath, name, enabled);
  (record.entry as { enabled: boolean }).enabled = enabled;
  if (enabled) {
    if (running) return { restartRequired: false };
    registry.onAtNextStart.add(name);
    registry.announce(record);
    return { restartRequired: true };
  }
  registry.onAtNextStart.delete(name);
  if (record.state === 'disabled') return { restartRequired: false };
  await registry.stopOne(record);
  registry.markDisabled(record);
  return { restartRequired: false };
}
