/**
 * An extension's options changed while the daemon runs (`GET|PUT|PATCH /runtime/extensions/{name}/config`,
 * `agt extensions config`): validated against the definition's `options` schema exactly as at start-up,
 * applied by the extension's `reconfigure` hook when it has one and runs, and persisted in the data
 * directory's overlay of extension options (config-overlay.ts; the shipped manifest is never written), so
 * a restart keeps them. Without the hook the change is persisted and answered `restartRequired: true`.
 */
import { AgtError } from '@agt/contracts';
import { mergePatch } from '../json-merge-patch.js';
import { writeOverlayEntry } from './config-overlay.js';
import { validateConfig } from './definition.js';
import { extensionNotInManifest } from './errors.js';
import { settleWithin } from './lifecycle.js';
import type { ExtensionRecord, ExtensionRegistry } from './registry.js';

export interface ExtensionConfigView {
  name: string;
  /** The options as written: the data directory's overlay entry when there is one, else the manifest's `config`. */
  config: Record<string, unknown>;
  /** Where `config` comes from: `overlay` (the owner's, in the data directory) or `manifest` (as shipped). */
  source: 'overlay' | 'manifest';
  /** What the extension runs with: the config validated, defaults applied (null when it cannot be read). */
  effective: unknown;
  /** The definition's `options` (JSON Schema), or null when it declares none or cannot be read. */
  schema: unknown;
  /** Whether a change applies without a restart (the extension runs and has `reconfigure`). */
  reconfigurable: boolean;
}

export interface ExtensionConfigChange extends ExtensionConfigView {
  applied: boolean;
  restartRequired: boolean;
}

/** A `reconfigure` that takes longer is given up on (the request must not hang, nor the next change). */
export const RECONFIGURE_DEADLINE_MS = 10_000;

const running = (record: ExtensionRecord) => record.state === 'loaded' || record.state === 'started';

export class ExtensionConfigs {
  /** One change at a time: two writers must not interleave their overlay rewrites. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly registry: ExtensionRegistry) {}

  view(name: string): ExtensionConfigView {
    const record = this.record(name);
    return {
      name,
      config: record.entry.config,
      source: this.registry.overlaid.has(name) ? 'overlay' : 'manifest',
      effective: record.definition
        ? running(record)
          ? record.config
          : this.validated(record, record.entry.config, false)
        : null,
      schema: record.definition?.options ?? null,
      reconfigurable: running(record) && typeof record.hooks?.reconfigure === 'function',
    };
  }

  /** `patch` merges into the config as written (RFC 7396); otherwise `config` replaces it. */
  change(name: string, config: Record<string, unknown>, options: { patch: boolean }): Promise<ExtensionConfigChange> {
    const next = this.queue.then(() => this.apply(name, config, options.patch));
    this.queue = next.catch(() => {});
    return next;
  }

  private async apply(name: string, input: Record<string, unknown>, patch: boolean): Promise<ExtensionConfigChange> {
    const record = this.record(name);
    if (!record.definition) {
      throw new AgtError(
        'conflict',
        `extension ${name} cannot be read (${record.error ?? 'no definition'}): its options cannot be checked; fix the module, or edit the manifest`,
      );
    }
    const raw = (patch ? mergePatch(record.entry.config, input) : input) as Record<string, unknown>;
    const effective = this.validated(record, raw, true);
    let applied = false;
    const reconfigure = running(record) ? record.hooks?.reconfigure : undefined;
    if (reconfigure) {
      const outcome = await settleWithin(RECONFIGURE_DEADLINE_MS, () => reconfigure.call(record.hooks, effective));
      if (outcome.timedOut) {
        // It may still finish; what it runs with is then unknown until the next change or start.
        throw new AgtError(
          'timeout',
          `extension ${name} did not apply the new config within ${RECONFIGURE_DEADLINE_MS} ms; nothing was saved`,
          { status: 504 },
        );
      }
      if ('error' in outcome) {
        throw new AgtError(
          'reconfigure_failed',
          `extension ${name} refused the new config: ${(outcome.error as Error)?.message ?? String(outcome.error)}`,
          { status: 422 },
        );
      }
      record.config = effective;
      applied = true;
    }
    this.persist(name, raw);
    record.entry.config = raw;
    return { ...this.view(name), applied, restartRequired: !applied };
  }

  private validated(record: ExtensionRecord, raw: Record<string, unknown>, strict: boolean): unknown {
    const checked = validateConfig(record.definition!, raw);
    if ('problem' in checked) {
      if (!strict) return null;
      // `invalid config: /types/telegram/apiRoot: ...`: the path is the part before the first colon after the prefix.
      const problem = checked.problem.replace(/^invalid config: /, '');
      throw new AgtError('bad_request', `Invalid options for extension ${record.name}: ${problem}`, {
        details: { path: problem.split(':')[0] },
      });
    }
    return checked.config;
  }

  private record(name: string): ExtensionRecord {
    const record = this.registry.get(name);
    if (!record) throw extensionNotInManifest(name);
    return record;
  }

  /** Saves the one extension's options in the data directory's overlay, keeping the others. */
  private persist(name: string, config: Record<string, unknown>): void {
    const path = this.registry.overlayPath;
    if (!path) throw new AgtError('conflict', 'the daemon loaded no extensions: there are no options to save');
    writeOverlayEntry(path, name, config);
    this.registry.overlaid.add(name);
  }
}
