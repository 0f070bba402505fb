/**
 * The agent registry: loads agent files, resolves `{id}` (id, then handle, then name), applies config
 * changes and unloads. It owns each file's lifetime: open, lease, runtime attach, lifecycle hooks,
 * inbox sources on load; the reverse on unload. Events are emitted after the state they announce is
 * committed and visible.
 */
import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { AgentConfigSchema } from './config-schema.js';
import {
  type AgentConfig,
  AgtError,
  type EventBus,
  type Logger,
  type AgentView,
  type Settings,
  firstSchemaError,
} from '@agt/contracts';
import type { AgentCandidate } from '../http-api/agents-api.js';
import type { Contributions } from '../extensions/contributions.js';
import { waitAtMost } from '../deadline.js';
import { announceAgentFileChange } from '../extensions/agent-file-notices.js';
import { AgentFile, BUSY_TIMEOUT_MS, isBusyError } from './agent-file.js';
import { readAgentKey } from './agent-key.js';
import { KnownAgents } from './known-agents.js';
import { VettedFiles } from './vetted-files.js';
import { voucherOf } from './vouched-files.js';
import { validateStoredConfig } from './stored-config.js';
import { assertNoNewProblems, configProblems } from './config-checks.js';
import { findConfigSecret } from './config-secrets.js';
import {
  agentAlreadyLoaded,
  agentFileLocked,
  agentNotLoaded,
  ambiguousAgent,
  attachFailed,
  filePathNotAbsolute,
  invalidConfig,
  reviewRequired,
  storedConfigHoldsSecret,
} from './errors.js';
import { LeaseKeeper } from './lease.js';
import { Placements } from './placement.js';
import { LoadedAgent } from './loaded-agent.js';
import { ReviewMarks } from './review-marks.js';
import type { AgentRuntimeHooks } from './runtime-hooks.js';
import type { LogInput } from './stores/logs-store.js';
import { UmbilicalWindow } from './umbilical.js';
import { agentSettled } from './settle-collection.js';

/** Grace a running turn gets at stop/unload. */
export const STOP_GRACE_MS = 5_000;

export interface RegistryDeps {
  dataDir: string;
  logger: Logger;
  bus: EventBus;
  contributions: Contributions;
  /** The runtime: attached to every agent at load, told of config changes, detached at unload. */
  runtime: AgentRuntimeHooks;
  /** Delivery function handed to inbox sources (the kernel's inbox service). */
  deliver: (agentId: string) => (message: import('@agt/contracts').InboundMessage) => Promise<{ messageId: number }>;
  /** The owner's settings: their ceiling caps every loaded agent's config (`ceiling.ts`). */
  settings?: { current(): Readonly<Settings>; onChange?(listener: (settings: Readonly<Settings>) => void): () => void };
  /**
   * Reads every value of a file in a process of its own, rejecting as `AgentFile.open` would: done before
   * opening a file the daemon did not write last (vetted-files.ts). Absent, files are opened directly.
   */
  readWhole?: (filePath: string) => Promise<void>;
}

const umbilicalOn = (config: Readonly<AgentConfig>) =>
  (config.umbilical?.log as { enabled?: boolean } | undefined)?.enabled === true;

export { validateStoredConfig };

/** Refuses a config that carries a secret value: `bad_request` (config changes) or `load_failed` (a file). */
export function assertNoSecrets(config: unknown, refusal: { filePath: string } | null = null): void {
  const secret = findConfigSecret(config);
  if (!secret) return;
  const what = `${secret.path}: secret values never go in the agent config; ${secret.hint}`;
  if (refusal) {
    throw storedConfigHoldsSecret(refusal.filePath, what, secret.path);
  }
  throw invalidConfig(what, secret.path);
}

export class AgentRegistry {
  readonly reviews: ReviewMarks;
  readonly umbilical = new UmbilicalWindow();
  readonly leases: LeaseKeeper;
  /** Which daemon of a fleet runs each agent (the `agt.agent-placement` point): asked before the lease. */
  readonly placements: Placements;
  /** Each agent id this daemon has seen, with its key: a file claiming a known id with another key is refused. */
  readonly known: KnownAgents;
  /** The files this daemon closed last, as it left them: opened without being read whole first. */
  readonly vetted: VettedFiles;
  /** How long opening a file waits for another process's SQLite lock before answering 409 (tests shorten it). */
  busyTimeoutMs = BUSY_TIMEOUT_MS;

  private readonly agents = new Map<string, LoadedAgent>();
  /** The same agents by canonical file path: loads, creates and summaries look a path up without a scan. */
  private readonly byFile = new Map<string, LoadedAgent>();
  private readonly loading = new Map<string, Promise<LoadedAgent>>();
  /** Ids of files being opened, so two files with one id cannot both slip past the duplicate check. */
  private readonly loadingIds = new Set<string>();
  private readonly unloading = new Map<string, Promise<void>>();
  private readonly closingPaths = new Map<string, Promise<void>>();
  /** Agents whose placement was lost before their load finished: unloaded as soon as it does. */
  private readonly lostWhileLoading = new Set<string>();
  private readonly unsubscribe: () => void;
  /** Each agent's applied config when last announced (load, config change, settings change). */
  private readonly applied = new WeakMap<LoadedAgent, Readonly<AgentConfig>>();

  constructor(private readonly deps: RegistryDeps) {
    this.reviews = new ReviewMarks(deps.dataDir, deps.logger);
    this.known = new KnownAgents(deps.dataDir);
    this.vetted = new VettedFiles(deps.dataDir);
    this.leases = new LeaseKeeper(deps.logger, (file) => this.leaseLost(file));
    this.placements = new Placements(() => deps.contributions.points, deps.logger);
    const unsubscribeBus = deps.bus.subscribe((event) => this.umbilical.record(event));
    const unsubscribeSettings = deps.settings?.onChange?.(() => this.ceilingChanged()) ?? (() => {});
    this.unsubscribe = () => {
      unsubscribeBus();
      unsubscribeSettings();
    };
  }

  /**
   * The owner changed the settings: an agent whose applied config moved with the ceiling is told as if
   * its config changed (the runtime re-reads it, `agent.config.changed` names the fields), so a lowered
   * ceiling takes effect at once.
   */
  private ceilingChanged(): void {
    for (const agent of this.list()) {
      const before = this.applied.get(agent);
      const after = agent.config;
      this.applied.set(agent, after);
      const fields = (['limits', 'security'] as const).filter(
        (key) => before !== undefined && JSON.stringify(before[key]) !== JSON.stringify(after[key]),
      );
      if (before === undefined || fields.length === 0) continue;
      void Promise.resolve(this.deps.runtime.configChanged(agent, before)).catch((error: unknown) =>
        this.log(agent, {
          level: 'error',
          origin: 'kernel',
          event: 'config_apply_failed',
          message: `the runtime could not apply the owner's new ceiling: ${(error as Error).message}`,
        }),
      );
      this.deps.bus.emit('agent.config.changed', { agentId: agent.id, payload: { fields } });
    }
  }

  /** Loaded agents in load order. */
  list(): LoadedAgent[] {
    return [...this.agents.values()];
  }

  get size(): number {
    return this.agents.size;
  }

  /** By id, then handle, then name. `not_found`, or 409 `ambiguous_agent` with `candidates`. */
  resolve(idOrName: string): LoadedAgent {
    const byId = this.agents.get(idOrName);
    if (byId) return byId;
    for (const matches of [
      this.list().filter((agent) => agent.handle === idOrName),
      this.list().filter((agent) => agent.name === idOrName),
    ]) {
      if (matches.length === 1) return matches[0]!;
      if (matches.length > 1) {
        const candidates: AgentCandidate[] = matches.map((agent) => ({
          id: agent.id,
          name: agent.name,
          handle: agent.handle ?? null,
          filePath: agent.filePath,
        }));
        throw ambiguousAgent(idOrName, candidates);
      }
    }
    throw agentNotLoaded(idOrName);
  }

  /** The loaded agent with this id, if any (no scan: hooks that run per load must not grow with the agents). */
  byId(agentId: string): LoadedAgent | undefined {
    return this.agents.get(agentId);
  }

  /** The loaded agent whose file is `filePath`, if any. */
  byPath(filePath: string): LoadedAgent | undefined {
    return this.byFile.get(canonicalPath(filePath));
  }

  /**
   * Loads an agent file; an already loaded file returns the loaded agent. `requireReview` refuses an
   * unreviewed file with 403 `AGENT_REVIEW_REQUIRED`. Missing file 404, not an agent file 422
   * `load_failed`, held by another daemon 409 `agent_file_in_use`, same id loaded from another file 409,
   * an id this daemon knows with another key 409 `agent_id_conflict` (known-agents.ts).
   * `asNew`: the file becomes a new agent: a fresh id is written into it (its handle dropped) before it
   * is loaded, so nothing kept or granted under the id it claimed reaches it (the caller gives it a new
   * key: agent-identity's `regenerate`). A loaded (or loading) file is refused then (409 `conflict`).
   * `file`: the file at this path, already open (create-agent hands over the file it just made instead of
   * closing and opening it again); the registry owns it from here, and closes it when the load fails.
   * `config` (with `file`): the config its creator wrote into it this instant, after the same schema
   * check (create-agent.ts `buildConfig`): not read back and checked a second time. A file
   * from anywhere else (opened here, or handed over by a restore) is read and fully checked.
   */
  async load(
    filePath: string,
    options: { requireReview?: boolean; file?: AgentFile; config?: AgentConfig; asNew?: boolean } = {},
  ): Promise<LoadedAgent> {
    if (!isAbsolute(filePath)) throw filePathNotAbsolute(filePath);
    const canonical = canonicalPath(filePath);
    await this.closingPaths.get(canonical);
    const loaded = this.byFile.get(canonical);
    if (options.asNew && (loaded || this.loading.has(canonical)))
      throw agentAlreadyLoaded(loaded?.id ?? '(loading)', canonical);
    if (loaded) {
      if (options.file && options.file !== loaded.file) await this.closeGiven(options.file);
      if (options.requireReview && !this.reviews.isReviewed(loaded.fileConfig))
        throw reviewRequired(loaded.id, canonical);
      return loaded;
    }
    let pending = this.loading.get(canonical);
    if (pending && options.file) await this.closeGiven(options.file);
    if (!pending) {
      pending = this.open(
        canonical,
        options.requireReview === true,
        options.file,
        options.file && options.config,
        options.asNew === true,
      ).finally(() => this.loading.delete(canonical));
      this.loading.set(canonical, pending);
      return pending;
    }
    const agent = await pending;
    if (options.requireReview && !this.reviews.isReviewed(agent.fileConfig)) throw reviewRequired(agent.id, canonical);
    return agent;
  }

  /**
   * Before the daemon opens `filePath` itself: a file it did not write last is read whole in the file
   * reader's process first (vetted-files.ts), rejecting as `AgentFile.open` would, unless an extension
   * vouches for its content (vouched-files.ts).
   */
  async readFirst(filePath: string): Promise<void> {
    if (!this.deps.readWhole || this.vetted.matches(filePath)) return;
    if ((await voucherOf(this.deps.contributions.points, filePath)) !== null) return;
    await this.deps.readWhole(filePath);
  }

  /** Closes a file handed to {@link load} that is not used, with the lease its creator took. */
  private async closeGiven(file: AgentFile): Promise<void> {
    this.leases.release(file);
    await file.close();
  }

  private async open(
    filePath: string,
    requireReview: boolean,
    given?: AgentFile,
    createdConfig?: AgentConfig,
    asNew = false,
  ): Promise<LoadedAgent> {
    if (!given) await this.readFirst(filePath);
    const file = given ?? AgentFile.open(filePath, { busyTimeoutMs: this.busyTimeoutMs });
    let leased = false;
    let placed = false;
    let agent: LoadedAgent | undefined;
    let claimedId: string | undefined;
    try {
      let config = createdConfig ?? validateStoredConfig(file.config.get(), filePath);
      assertNoSecrets(config, { filePath });
      if (asNew) {
        const { handle: _handle, ...rest } = config;
        config = { ...rest, id: `agt-${randomUUID()}` };
      }
      const key = readAgentKey(file);
      this.known.check(config.id, key, filePath);
      const other = this.agents.get(config.id);
      if (other || this.loadingIds.has(config.id)) {
        const otherPath = other?.filePath ?? null;
        throw agentAlreadyLoaded(config.id, otherPath);
      }
      this.loadingIds.add(config.id);
      claimedId = config.id;
      if (requireReview && !this.reviews.isReviewed(config)) throw reviewRequired(config.id, filePath);
      const id = config.id;
      await this.placements.claim({ agentId: id, name: config.name, handle: config.handle ?? null, filePath }, () =>
        this.placementLost(id),
      );
      placed = true;
      this.leases.acquire(file);
      leased = true;
      // Written once the lease is ours: the file is this new agent from now on, wherever it is loaded.
      if (asNew) file.config.put(config);
      // Bound before anything is kept or granted under the id; a record that cannot be written fails the load.
      this.known.remember(config.id, key);
      const settings = this.deps.settings;
      agent = new LoadedAgent(filePath, file, config, settings ? () => settings.current() : undefined);
      if (umbilicalOn(config)) this.umbilical.enable(agent.id);
      await this.deps.runtime.attach(agent);
    } catch (error) {
      if (agent) this.umbilical.disable(agent.id);
      if (claimedId) this.loadingIds.delete(claimedId);
      if (claimedId) this.lostWhileLoading.delete(claimedId);
      // A created file comes with its lease already taken (create-agent.ts).
      if (leased || given) this.leases.release(file);
      if (placed && claimedId) this.placements.release(claimedId);
      await file.close();
      if (error instanceof AgtError) throw error;
      if (isBusyError(error)) throw agentFileLocked(filePath, error);
      throw attachFailed(filePath, error);
    }
    this.agents.set(agent.id, agent);
    this.byFile.set(agent.filePath, agent);
    this.loadingIds.delete(agent.id);
    if (this.lostWhileLoading.delete(agent.id)) this.placementLost(agent.id);

    this.applied.set(agent, agent.config);
    for (const cap of agent.capped) {
      this.log(agent, {
        level: 'warn',
        origin: 'kernel',
        event: 'config_capped',
        message: `${cap.field} is capped by the owner's settings: the file asks ${JSON.stringify(cap.asked)}, ${JSON.stringify(cap.applied)} applies`,
      });
    }
    for (const problem of this.configProblems(agent)) {
      this.log(agent, {
        level: 'warn',
        origin: 'kernel',
        event: 'config_refused',
        message: `${problem.field} is refused and does not apply: ${problem.reason}`,
      });
    }
    if (file.openedAtVersion !== file.version) {
      this.log(agent, {
        level: 'info',
        origin: 'kernel',
        event: 'migrated',
        message: `agent file migrated from schema ${file.openedAtVersion} to ${file.version}`,
      });
    }
    this.deps.bus.emit('agent.loaded', { agentId: agent.id, payload: { name: agent.name, filePath } });
    try {
      this.deps.runtime.loaded?.(agent);
    } catch (error) {
      this.deps.logger.error({ err: error, agentId: agent.id }, 'runtime loaded hook failed');
    }
    const view = agent.view();
    await this.deps.contributions.runLifecycle('loaded', view);
    await this.deps.contributions.attachInboxSources(view, this.deps.deliver(agent.id));
    file.releaseMemory();
    agentSettled();
    return agent;
  }

  /**
   * Stops and unloads: inbox sources detach, the runtime gets `graceMs` for a running turn, hooks run,
   * the lease is released and the file closed (it stays on disk). Concurrent calls share one unload.
   * With `deadlineMs`, the release and close do not wait longer than that for the runtime and the hooks
   * (they go on in the background): a hanging hook never leaves the lease or the WAL behind at shutdown.
   */
  unload(agent: LoadedAgent, options: { reason?: string; graceMs?: number; deadlineMs?: number } = {}): Promise<void> {
    const existing = this.unloading.get(agent.id);
    if (existing) return existing;
    if (this.agents.get(agent.id) !== agent) return Promise.resolve();
    const reason = options.reason ?? 'unload';
    this.agents.delete(agent.id);
    if (this.byFile.get(agent.filePath) === agent) this.byFile.delete(agent.filePath);
    const work = (async () => {
      const view = agent.view();
      const teardown = (async () => {
        await this.deps.contributions.detachInboxSources(agent.id);
        try {
          await this.deps.runtime.detach(agent, { graceMs: options.graceMs ?? STOP_GRACE_MS, reason });
        } catch (error) {
          this.deps.logger.error({ err: error, agentId: agent.id }, 'runtime detach failed');
        }
        if (agent.started) await this.deps.contributions.runLifecycle('stopped', view);
        await this.deps.contributions.runLifecycle('unloaded', view);
      })().catch((error: unknown) =>
        this.deps.logger.error({ err: error, agentId: agent.id }, 'unload teardown failed'),
      );
      if (options.deadlineMs === undefined) await teardown;
      else if (!(await settlesWithin(teardown, options.deadlineMs))) {
        this.deps.logger.warn(
          { agentId: agent.id, deadlineMs: options.deadlineMs },
          'unload: runtime or lifecycle hooks exceeded the deadline; releasing the lease and closing the file anyway',
        );
      }
      this.umbilical.disable(agent.id);
      this.leases.release(agent.file);
      this.placements.release(agent.id);
      await agent.file.close();
      this.vetted.remember(agent.filePath);
      this.deps.bus.emit('agent.unloaded', { agentId: agent.id, payload: { name: agent.name, reason } });
    })().finally(() => {
      this.unloading.delete(agent.id);
      this.closingPaths.delete(agent.filePath);
    });
    this.unloading.set(agent.id, work);
    this.closingPaths.set(
      agent.filePath,
      work.catch(() => {}),
    );
    return work;
  }

  /**
   * Unloads every agent in parallel (shutdown: no grace). Each agent's runtime and hooks get
   * `deadlineMs`; its lease is then released and its file closed whether they finished or not.
   */
  async unloadAll(options: { reason: string; graceMs: number; deadlineMs: number }): Promise<void> {
    await Promise.all(
      this.list().map((agent) =>
        this.unload(agent, { reason: options.reason, graceMs: options.graceMs, deadlineMs: options.deadlineMs }).catch(
          (error) => this.deps.logger.error({ err: error, agentId: agent.id }, 'unload failed at shutdown'),
        ),
      ),
    );
    this.leases.stop();
  }

  /**
   * Another daemon took the file's lease over (ours had gone stale, e.g. this process was suspended):
   * this daemon stops driving the file at once. The lease is theirs now and is left alone (the keeper
   * already dropped it); the agent unloads with reason `lease_lost` (no grace for a running turn).
   */
  private leaseLost(file: AgentFile): void {
    const agent = this.list().find((candidate) => candidate.file === file);
    if (!agent) return;
    const message = 'another daemon took over this agent file; unloading it here';
    this.deps.logger.warn({ agentId: agent.id, filePath: agent.filePath, event: 'lease_lost' }, message);
    this.log(agent, { level: 'error', origin: 'kernel', event: 'lease_lost', message });
    this.unload(agent, { reason: 'lease_lost', graceMs: 0 }).catch((error: unknown) =>
      this.deps.logger.error({ err: error, agentId: agent.id }, 'unload after a lost lease failed'),
    );
  }

  /**
   * The placement provider says another daemon may run the agent now (its record expired or was taken):
   * this daemon stops it at once, as for a lost lease (reason `placement_lost`, no grace for a running turn).
   */
  private placementLost(agentId: string): void {
    const agent = this.agents.get(agentId);
    if (!agent) {
      if (this.loadingIds.has(agentId)) this.lostWhileLoading.add(agentId);
      return;
    }
    const message = 'this daemon lost the agent placement; unloading it here';
    this.deps.logger.warn({ agentId, event: 'placement_lost' }, message);
    this.log(agent, { level: 'error', origin: 'kernel', event: 'placement_lost', message });
    this.unload(agent, { reason: 'placement_lost', graceMs: 0 }).catch((error: unknown) =>
      this.deps.logger.error({ err: error, agentId }, 'unload after a lost placement failed'),
    );
  }

  /** The owner gave a loaded agent a new key (agent-identity's `regenerate`): its id is bound to that key now. */
  rekeyed(agent: LoadedAgent): void {
    this.known.remember(agent.id, readAgentKey(agent.file));
  }

  /** Releases the bus subscription and the lease timer (after unloadAll). */
  dispose(): void {
    this.unsubscribe();
    this.leases.stop();
  }

  /**
   * Replaces the config of a loaded agent (validated by the caller or here), commits it, carries the
   * review mark along, tells the runtime and emits `agent.config.changed`. The id cannot change; the
   * display state does not move. Owner locks are the caller's business (the agent's own tool).
   */
  async updateConfig(agent: LoadedAgent, next: AgentConfig): Promise<AgentConfig> {
    const problem = firstSchemaError(AgentConfigSchema, next);
    if (problem !== null) throw invalidConfig(problem, problem.split(':')[0]);
    assertNoSecrets(next);
    if (next.id !== agent.id) throw invalidConfig(`/id: the agent id cannot change (${agent.id})`, '/id');
    const previous = agent.fileConfig;
    const previousApplied = agent.config;
    // A writer that read the applied (capped) config and hands a capped field back unchanged keeps the
    // file's own value: capping never rewrites the file behind the owner's back.
    for (const key of ['security', 'limits'] as const) {
      if (previous[key] !== previousApplied[key] && JSON.stringify(next[key]) === JSON.stringify(previousApplied[key]))
        next = { ...next, [key]: previous[key] };
    }
    assertNoNewProblems(this.deps.contributions.points, previous, next, agent.id, this.deps.logger);
    agent.file.config.put(next);
    agent.setConfig(next);
    this.reviews.carry(previous, next, agent.filePath);
    if (umbilicalOn(next)) this.umbilical.enable(agent.id);
    else this.umbilical.disable(agent.id);
    try {
      this.applied.set(agent, agent.config);
      await this.deps.runtime.configChanged(agent, previousApplied);
    } catch (error) {
      this.log(agent, {
        level: 'error',
        origin: 'kernel',
        event: 'config_apply_failed',
        message: `the runtime could not apply the new config: ${(error as Error).message}`,
      });
    }
    const fields = changedFields(previous, next);
    this.deps.bus.emit('agent.config.changed', { agentId: agent.id, payload: { fields } });
    // Its name, handle or autostart may differ now: indexes of agent files (tracked-folders) follow before the answer.
    await announceAgentFileChange(this.deps.contributions.points, this.deps.logger, {
      change: 'changed',
      filePath: agent.filePath,
      agentId: agent.id,
    });
    return next;
  }

  /** What the extensions' config checks refuse in the agent's file config (`config-checks.ts`). */
  configProblems(agent: LoadedAgent) {
    return configProblems(this.deps.contributions.points, agent.fileConfig, agent.id, this.deps.logger);
  }

  /** Writes one `agt_logs` row, then emits `log.written`. Never throws (a failed write is logged to stderr). */
  log(agent: LoadedAgent, input: LogInput): void {
    try {
      const row = agent.file.logs.write(input);
      this.deps.bus.emit('log.written', {
        agentId: agent.id,
        payload: { level: row.level, origin: row.origin, event: row.event, message: row.message },
      });
    } catch (error) {
      this.deps.logger.warn({ err: error, agentId: agent.id }, 'agent log write failed');
    }
  }

  views(): AgentView[] {
    return this.list().map((agent) => agent.view());
  }
}

/** The real path of an existing file (symlinks resolved), else the normalized absolute path. */
export function canonicalPath(filePath: string): string {
  try {
    return realpathSync(filePath);
  } catch {
    return resolve(filePath);
  }
}

function changedFields(previous: Readonly<AgentConfig>, next: Readonly<AgentConfig>): string[] {
  const keys = new Set([...Object.keys(previous), ...Object.keys(next)]);
  return [...keys]
    .filter(
      (key) =>
        JSON.stringify((previous as Record<string, unknown>)[key]) !==
        JSON.stringify((next as Record<string, unknown>)[key]),
    )
    .sort();
}

/** True when `work` settled within `ms` (it goes on either way); the timer never outlives the call. */
function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  return waitAtMost(
    work.then(() => true),
    ms,
    () => false,
  );
}
