/**
 * An extension's options changed while the daemon runs (`GET|PUT|PATCH /runtime/extensions/{name}/config`,
 * `agt extensions config`): validated against the definition's `options` schema exactly as at start-up,
 * applied by the extension's `reconfigure` hook when it has one and runs, and persisted into the
 * manifest entry's `config` (D3: the manifest is where extension options live), so a restart keeps them.
 * Without the hook the change is persisted and answered `restartRequired: true`.
 */
import { readFileSync, statSync } from 'node:fs';
import { AgtError } from '../../contracts/errors.js';
import { mergePatch } from '../json-merge-patch.js';
import { writeFileAtomic } from '../settings.js';
import { validateConfig } from './definition.js';
import { extensionNotInManifest } from './errors.js';
import { settleWithin } from './lifecycle.js';
import type { ExtensionRecord, ExtensionRegistry } from './registry.js';

export interface ExtensionConfigView {
  name: string;
  /** The manifest entry's `config`, as written. */
  config: Record<string, unknown>;
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
  /** One change at a time: two writers must not interleave their manifest rewrites. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly registry: ExtensionRegistry) {}

  view(name: string): ExtensionConfigView {
    const record = this.record(name);
    return {
      name,
      config: record.entry.config,
      effective: record.definition ? (running(record) ? record.config : this.validated(record, record.entry.config, false)) : null,
      schema: record.definition?.options ?? null,
      reconfigurable: running(record) && typeof record.hooks?.reconfigure === 'function',
    };
  }

  /** `patch` merges into the manifest's config (RFC 7396); otherwise `config` replaces it. */
  change(name: string, config: Record<string, unknown>, options: { patch: boolean }): Promise<ExtensionConfigChange> {
    const next = this.queue.then(() => this.apply(name, config, options.patch));
    this.queue = next.catch(() => {});
    return next;
  }

  private async apply(name: string, input: Record<string, unknown>, patch: boolean): Promise<ExtensionConfigChange> {
    const record = this.record(name);
    if (!record.definition) {
      throw new AgtError('conflict', `extension ${name} cannot be read (${record.error ?? 'no definition'}): its options cannot be checked; fix the module, or edit the manifest`);
    }
    const raw = (patch ? mergePatch(record.entry.config, input) : input) as Record<string, unknown>;
    const effective = this.validated(record, raw, true);
    let applied = false;
    const reconfigure = running(record) ? record.hooks?.reconfigure : undefined;
    if (reconfigure) {
      const outcome = await settleWithin(RECONFIGURE_DEADLINE_MS, () => reconfigure.call(record.hooks, effective));
      if (outcome.timedOut) {
        // It may still finish; what it runs with is then unknown until the next change or start.
        throw new AgtError('timeout', `extension ${name} did not apply the new config within ${RECONFIGURE_DEADLINE_MS} ms; nothing was saved`, { status: 504 });
      }
      if ('error' in outcome) {
        throw new AgtError('reconfigure_failed', `extension ${name} refused the new config: ${(outcome.error as Error)?.message ?? String(outcome.error)}`, { status: 422 });
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
      throw new AgtError('bad_request', `Invalid options for extension ${record.name}: ${problem}`, { details: { path: problem.split(':')[0] } });
    }
    return checked.config;
  }

  private record(name: string): ExtensionRecord {
    const record = this.registry.get(name);
    if (!record) throw extensionNotInManifest(name);
    return record;
  }

  /** Rewrites the one entry's `config` in the manifest file, keeping everything else as it is. */
  private persist(name: string, config: Record<string, unknown>): void {
    const path = this.registry.manifestPath;
    if (!path) throw new AgtError('conflict', 'the daemon read no extension manifest: nothing to persist into');
    const text = readFileSync(path, 'utf8');
    const manifest = JSON.parse(text) as { extensions: Array<{ name: string; config?: unknown }> };
    const entry = manifest.extensions.find((candidate) => candidate.name === name);
    if (!entry) throw new AgtError('conflict', `extension ${name} is no longer in the manifest ${path}`);
    entry.config = config;
    writeFileAtomic(path, `${JSON.stringify(manifest, null, 2)}\n`, statSync(path).mode & 0o777);
  }
}
