/**
 * Scheduled backups (settings `backups: {dir, every, keep, seal}`, docs/backups.md): at each time of the
 * cron expression `every` (in settings `timezone`), every loaded agent and every agent file the agent
 * locator lists (the tracked folders) is copied once, one after another, into its own folder under
 * `dir`; then only its newest `keep` scheduled copies stay. Each copy announces `backup.completed` or
 * `backup.failed`. A run still going when the next time comes is not doubled (that time is skipped).
 * Settings changes take effect at once; the timer is unref'd and cleared at shutdown.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join, sep } from 'node:path';
import type { CronTime } from 'cron';
import { cronTime } from '../cron-expression.js';
import type { BackupSettings, Settings } from '@agt/contracts';
import type { AgentRegistry } from '../agents/registry.js';
import { canonicalPath } from '../agents/registry.js';
import { AgentFile } from '../agents/agent-file.js';
import { loadFailed } from '../agents/errors.js';
import { readAgentKey, type AgentKey } from '../agents/agent-key.js';
import { backupFile, backupsRoot, type BackupDeps } from './backup.js';
import { isBackupOf } from './paths.js';

export const DEFAULT_KEEP = 7;
/** setTimeout's largest delay; a later time is reached in steps. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export interface ScheduleRun {
  startedAt: string;
  finishedAt: string | null;
  completed: number;
  failed: number;
}

export interface ScheduleStatus {
  enabled: boolean;
  every: string | null;
  keep: number | null;
  dir: string | null;
  sealed: boolean;
  nextRunAt: string | null;
  running: boolean;
  lastRun: ScheduleRun | null;
  /** Why the schedule does not run (a bad cron expression), else null. */
  problem: string | null;
}

export interface SchedulerDeps extends BackupDeps {
  registry: AgentRegistry;
  settings: { current(): Readonly<Settings>; onChange?(listener: (settings: Readonly<Settings>) => void): () => void };
  /** Every agent file the locators know (tracked folders), loaded or not. */
  knownFiles(): Promise<readonly string[]>;
}

export class BackupScheduler {
  private timer: NodeJS.Timeout | undefined;
  private cron: CronTime | undefined;
  private current: BackupSettings | undefined;
  private running: Promise<ScheduleRun> | undefined;
  private lastRun: ScheduleRun | null = null;
  private problem: string | null = null;
  private stopped = false;
  private readonly unsubscribe: () => void;

  constructor(private readonly deps: SchedulerDeps) {
    this.unsubscribe = deps.settings.onChange?.(() => this.configure()) ?? (() => {});
    this.configure();
  }

  /** Re-reads `backups` and `timezone` and re-arms the timer. */
  configure(): void {
    const settings = this.deps.settings.current();
    this.current = settings.backups;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.cron = undefined;
    this.problem = null;
    if (!this.current || this.stopped) return;
    try {
      this.cron = new (cronTime())(this.current.every, settings.timezone);
    } catch (error) {
      this.problem = `backups.every ${this.current.every}: ${(error as Error).message}`;
      this.deps.logger.error({ every: this.current.every }, this.problem);
      return;
    }
    this.arm();
  }

  private arm(): void {
    if (!this.cron || this.stopped) return;
    const delay = Math.min(Math.max(1, this.cron.getTimeout()), MAX_DELAY_MS);
    const due = Date.now() + delay;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (Date.now() + 5 < due) return this.arm();
      if (!this.running)
        void this.runNow().catch((error: unknown) =>
          this.deps.logger.error({ err: error }, 'scheduled backups failed'),
        );
      this.arm();
    }, delay).unref();
  }

  status(): ScheduleStatus {
    const backups = this.current;
    return {
      enabled: backups !== undefined && this.cron !== undefined,
      every: backups?.every ?? null,
      keep: backups ? (backups.keep ?? DEFAULT_KEEP) : null,
      dir: backups ? backupsRoot(this.deps) : null,
      sealed: backups?.seal === true,
      nextRunAt: this.cron && this.timer ? this.cron.sendAt().toUTC().toISO() : null,
      running: this.running !== undefined,
      lastRun: this.lastRun,
      problem: this.problem,
    };
  }

  /**
   * One run now (the timer's, or a test's tick): every loaded agent, then every known file not loaded.
   * A second call while one runs shares it.
   */
  runNow(): Promise<ScheduleRun> {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async run(): Promise<ScheduleRun> {
    const run: ScheduleRun = { startedAt: new Date().toISOString(), finishedAt: null, completed: 0, failed: 0 };
    const keep = this.current?.keep ?? DEFAULT_KEEP;
    const seal = this.current?.seal === true;
    // The folder too is the run's own: a settings change during the run never sends a copy, or its retention,
    // to another folder.
    const folder = backupsRoot(this.deps);
    const seen = new Set<string>();
    const jobs: Array<{ filePath: string; agentId: string | null }> = [];
    for (const agent of this.deps.registry.list()) {
      seen.add(agent.filePath);
      jobs.push({ filePath: agent.filePath, agentId: agent.id });
    }
    let known: readonly string[] = [];
    try {
      known = await this.deps.knownFiles();
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'scheduled backups: the agent locator could not list its files');
    }
    // Copies are never copied again: a tracked folder that holds the backups folder lists them too.
    const root = `${canonicalPath(folder)}${sep}`;
    for (const path of known) {
      const real = canonicalPath(path);
      if (real.startsWith(root)) continue;
      if (!seen.has(real)) {
        seen.add(real);
        jobs.push({ filePath: real, agentId: null });
      }
    }
    for (const job of jobs) {
      if (this.stopped) break;
      // A file that is not loaded is read for its id (read-only, no lease), then copied like the others;
      // one that claims the id of an agent known here with another key never goes among that agent's copies.
      const stored = job.agentId === null ? await storedOf(this.deps.registry, job.filePath) : null;
      const agentId = job.agentId ?? stored?.id;
      if (!agentId) {
        run.failed++;
        continue;
      }
      if (stored) {
        try {
          this.deps.registry.known.check(stored.id, stored.key, job.filePath);
        } catch (error) {
          run.failed++;
          this.deps.logger.warn(
            { err: error, agentId, filePath: job.filePath },
            'scheduled backup skipped: the file claims a known agent id with another key',
          );
          continue;
        }
      }
      try {
        await backupFile(this.deps, job.filePath, agentId, {
          seal,
          scheduled: true,
          dir: join(folder, agentId),
          prune: () => this.prune(join(folder, agentId), agentId, keep),
        });
        run.completed++;
      } catch (error) {
        run.failed++;
        this.deps.logger.warn({ err: error, agentId, filePath: job.filePath }, 'scheduled backup failed');
      }
    }
    run.finishedAt = new Date().toISOString();
    // The last finished run (a run going on shows as `running`).
    this.lastRun = run;
    return run;
  }

  /** Removes the agent's scheduled copies in `dir` beyond the newest `keep`; returns their paths. */
  private prune(dir: string, agentId: string, keep: number): string[] {
    const copies = readdirSync(dir)
      .filter((name) => isBackupOf(agentId, name))
      .sort();
    const removed = copies.slice(0, Math.max(0, copies.length - keep)).map((name) => join(dir, name));
    for (const path of removed) rmSync(path, { force: true });
    return removed;
  }

  /** Clears the timer and waits for a run in progress (shutdown). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }
}

/** The agent id and key (agent-key.ts) an agent file holds, read-only (no migration, no lease); rejects as AgentFile.open does. */
function storedIdAndKey(filePath: string): { id: string; key: AgentKey } {
  const file = AgentFile.open(filePath, { readonly: true });
  try {
    const id = (file.config.get() as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'string') throw loadFailed(filePath, 'no_config', 'the file holds no agent id');
    return { id, key: readAgentKey(file) };
  } finally {
    void file.close();
  }
}

/** {@link storedIdAndKey} of a file the daemon may not have written last (read whole elsewhere first). */
export async function readStoredIdAndKey(
  registry: AgentRegistry,
  filePath: string,
): Promise<{ id: string; key: AgentKey }> {
  await registry.readFirst(filePath);
  return storedIdAndKey(filePath);
}

async function storedOf(registry: AgentRegistry, filePath: string): Promise<{ id: string; key: AgentKey } | null> {
  try {
    return await readStoredIdAndKey(registry, filePath);
  } catch {
    return null;
  }
}
