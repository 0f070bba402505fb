/**
 * The extensions' state: one record per manifest entry and the only place its state changes, so that
 * every failure withdraws contributions, releases subscriptions, is logged and emits
 * `extension.state.changed` the same way, whatever phase (import, register, start, stop) it came from.
 */
import type { ExtensionDefinition, ExtensionHooks } from '@agt/contracts';
import type { ExtensionHostDeps } from './host-deps.js';
import type { ManifestEntry } from './manifest.js';

/**
 * `disabled`: off in the manifest. `pending`: waiting for its scope to register. `loaded`: `register`
 * returned. `started`: `start` returned. `failed`: see `error`. `stopped`: `stop` ran (shutdown).
 */
/** Status of each extension, for `GET /runtime/extensions`. */
export interface ExtensionStatus {
  name: string;
  version: string | null;
  enabled: boolean;
  loaded: boolean;
  error: string | null;
  /** The failure's stable code: `contract_incompatible`, else `extension_failed`; null unless failed. */
  errorCode?: string | null;
  prefix: string | null;
  dependsOn: string[];
  module: string;
  /** Set by the extension loader. */
  state?: 'disabled' | 'pending' | 'loaded' | 'started' | 'failed' | 'stopped';
  /** Segment of its agent-scoped routes (`/agents/{id}/<segment>`), or null. */
  agentRoutes?: string | null;
  /** What the running extension cannot do now (its `problem` hook), or null. */
  problem?: string | null;
}

export type ExtensionState = 'disabled' | 'pending' | 'loaded' | 'started' | 'failed' | 'stopped';

export interface ExtensionRecord {
  readonly entry: ManifestEntry;
  readonly name: string;
  definition: ExtensionDefinition | null;
  /** The manifest's config after validation against `options`. */
  config: unknown;
  prefix: string | null;
  agentRoutes: string | null;
  dependsOn: string[];
  state: ExtensionState;
  /** Why it failed, without the extension's name (the name is in every sentence that shows it). */
  error: string | null;
  /** The failure's stable code (see {@link ExtensionStatus.errorCode}). */
  errorCode?: string;
  /** What `register` returned; stop is called when present, even after a failed start. */
  hooks: ExtensionHooks | null;
  stopCalled: boolean;
  /** Releases the bus and settings subscriptions made through the context. */
  release: () => void;
}

/** A running extension's own account of what it cannot do now (ExtensionHooks.problem); a throw reads as none. */
function problemOf(record: ExtensionRecord): string | null {
  if (record.state !== 'loaded' && record.state !== 'started') return null;
  try {
    const problem = record.hooks?.problem?.call(record.hooks);
    return typeof problem === 'string' && problem !== '' ? problem.slice(0, 1000) : null;
  } catch {
    return null;
  }
}

export class ExtensionRegistry {
  readonly records = new Map<string, ExtensionRecord>();
  /** The manifest the records came from (set by the loader); null before it ran. */
  manifestPath: string | null = null;
  /** The data directory's file of the owner's extension options (config-overlay.ts); null before the loader ran. */
  overlayPath: string | null = null;
  /** The extensions whose options come from that file rather than the manifest. */
  overlaid = new Set<string>();
  /** Runs one extension's `stop` now (set by the loader; `PATCH /runtime/extensions/{name}` turns one off). */
  stopOne: (record: ExtensionRecord) => Promise<void> = async () => {};
  /** Turned on while the daemon runs: they load at its next start (routes are fixed once the server listens). */
  readonly onAtNextStart = new Set<string>();

  constructor(private readonly kernel: Pick<ExtensionHostDeps, 'logger' | 'bus' | 'contributions'>) {}

  add(record: ExtensionRecord): void {
    this.records.set(record.name, record);
  }

  get(name: string): ExtensionRecord | undefined {
    return this.records.get(name);
  }

  /** Marks a record failed (the first failure wins), withdraws what it contributed, tells the bus. */
  fail(record: ExtensionRecord, reason: string, cause?: unknown, code = 'extension_failed'): void {
    if (record.state === 'failed' || record.state === 'disabled') return;
    record.state = 'failed';
    record.error = reason;
    record.errorCode = code;
    this.kernel.contributions.withdraw(record.name);
    record.release();
    const error = new Error(`extension ${record.name}: ${reason}`, cause === undefined ? undefined : { cause });
    this.kernel.logger.error({ err: error, extension: record.name }, `extension ${record.name} failed`);
    this.emit(record);
  }

  markLoaded(record: ExtensionRecord, hooks: ExtensionHooks | null): void {
    record.hooks = hooks;
    if (record.state !== 'pending') return;
    record.state = 'loaded';
    this.emit(record);
  }

  markStarted(record: ExtensionRecord): void {
    if (record.state === 'loaded') record.state = 'started';
  }

  markStopped(record: ExtensionRecord): void {
    this.kernel.contributions.withdraw(record.name);
    record.release();
    if (record.state !== 'loaded' && record.state !== 'started') return;
    record.state = 'stopped';
    this.emit(record);
  }

  /** The owner turned it off: what it contributed is withdrawn, its subscriptions released, its routes answer 503. */
  markDisabled(record: ExtensionRecord): void {
    this.kernel.contributions.withdraw(record.name);
    record.release();
    record.state = 'disabled';
    record.error = null;
    this.emit(record);
  }

  /** Tells the bus its `enabled` changed without a change of state (turned on, to load at the next start). */
  announce(record: ExtensionRecord): void {
    this.emit(record);
  }

  /** Why requests to this extension's routes get a 503 right now, or null when it serves. */
  unavailableReason(record: ExtensionRecord): string | null {
    switch (record.state) {
      case 'loaded':
      case 'started':
        return null;
      case 'disabled':
        return this.onAtNextStart.has(record.name) ? 'turned on: it loads at the next start of the daemon' : 'disabled';
      case 'failed':
        return `failed: ${record.error ?? 'unknown error'}`;
      case 'stopped':
        return 'stopped';
      case 'pending':
        return 'not loaded yet';
    }
  }

  status(): ExtensionStatus[] {
    return [...this.records.values()].map((record) => ({
      name: record.name,
      version: record.definition?.version ?? null,
      enabled: record.entry.enabled,
      loaded: record.state === 'loaded' || record.state === 'started',
      error: record.state === 'failed' ? record.error : null,
      errorCode: record.state === 'failed' ? (record.errorCode ?? 'extension_failed') : null,
      prefix: record.prefix,
      dependsOn: record.dependsOn,
      module: record.entry.module,
      state: record.state,
      agentRoutes: record.agentRoutes,
      problem: problemOf(record),
    }));
  }

  private emit(record: ExtensionRecord): void {
    this.kernel.bus.emit('extension.state.changed', {
      agentId: null,
      source: 'kernel',
      payload: {
        name: record.name,
        enabled: record.entry.enabled,
        loaded: record.state === 'loaded' || record.state === 'started',
        error: record.state === 'failed' ? record.error : null,
      },
    });
  }
}
