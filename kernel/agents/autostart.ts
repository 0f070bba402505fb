/**
 * The autostart scan (`POST /agents/autostart`): agent files under the given folders
 * that are marked `autostart`, reviewed on this machine and not password-protected are loaded and
 * started; the others are skipped with a reason (`already_loaded`, `not_autostart`,
 * `password_protected`, `unreviewed`); files that cannot be read are reported as failed. The folder
 * walk is asynchronous and bounded (see {@link findAgentFiles}); a scan cut short says `truncated`.
 */
import { opendir } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import {
  type AgentConfig,
  AUTOSTART_SKIP_REASONS,
  type AutostartReport,
  type AutostartSkipReason,
} from '@agt/contracts';
import type { AgentFile } from './agent-file.js';
import { trackedDirNotAbsolute } from './errors.js';
import { canonicalPath } from './registry.js';
import { startAgent, type StartDeps } from './start-agent.js';

/**
 * What autostart uses of the kernel: starting, plus the credentials' check whether a file's envelope needs
 * a password, and the reading of a not-loaded file's summary (inspect-file.ts run off the event loop:
 * credentials/file-reader.ts). Both handed in: credentials/ builds on agents/, so agents/ does not
 * import it.
 */
export interface AutostartDeps extends StartDeps {
  isPasswordProtected(file: AgentFile): boolean;
  readSummary(filePath: string): Promise<{ config: AgentConfig; passwordProtected: boolean }>;
}

/** The skip reasons are the contract's (`ctx.launcher.autostart` reports the same ones). */
export const SKIP_REASONS = AUTOSTART_SKIP_REASONS;
export type SkipReason = AutostartSkipReason;

/** Which bound stopped a scan early. */
export const TRUNCATION_REASONS = ['entries', 'agent_files', 'time'] as const;
export type TruncationReason = (typeof TRUNCATION_REASONS)[number];

/** `scanned` counts agent files found and read before the time budget ran out. */
export interface AutostartResult extends AutostartReport {
  /** True when a bound stopped the scan before it saw every folder (`truncatedBy` says which). */
  truncated: boolean;
  truncatedBy?: TruncationReason;
}

/**
 * Bounds of one scan (all folders of a request together). Internal: tests lower them.
 * - `maxEntries`: directory entries looked at;
 * - `maxAgentFiles`: `.agt` files collected (each is opened read-only afterwards);
 * - `timeBudgetMs`: wall time of the folder walk plus the reading of the files found (the files left
 *   unread are not reported; starting eligible agents is never cut short).
 */
export const AUTOSTART_LIMITS = { maxEntries: 10_000, maxAgentFiles: 200, timeBudgetMs: 5_000 };

/** Folders never descended into: kernel and device trees, boot files, and package or VCS folders. */
export const SKIPPED_SYSTEM_PATHS = new Set(['/proc', '/sys', '/dev', '/run', '/boot', '/snap', '/lost+found']);
export const SKIPPED_FOLDER_NAMES = new Set(['node_modules', '.git']);

export interface ScanResult {
  files: string[];
  truncatedBy: TruncationReason | null;
}

/**
 * `.agt` files under `dirs`, descending at most `maxDepth` folder levels below each; asynchronous
 * (the event loop stays free: every folder read is awaited, and the walk yields between folders),
 * bounded by {@link AUTOSTART_LIMITS}. Skipped: unreadable folders, hidden folders (`.git` included),
 * `node_modules`, the system folders of {@link SKIPPED_SYSTEM_PATHS}, and symbolic links (a linked
 * folder or file is never followed). Sorted by name within each folder.
 */
export async function findAgentFiles(
  dirs: string[],
  maxDepth: number,
  limits = AUTOSTART_LIMITS,
  deadline = Date.now() + limits.timeBudgetMs,
): Promise<ScanResult> {
  const files: string[] = [];
  const seen = new Set<string>();
  let entries = 0;
  // Depth-first with an explicit stack, so the order matches a recursive walk (name order per folder).
  const stack: Array<{ dir: string; depth: number }> = [...dirs]
    .reverse()
    .map((dir) => ({ dir: resolve(dir), depth: maxDepth }));
  while (stack.length > 0) {
    const { dir, depth } = stack.pop()!;
    if (Date.now() > deadline) return { files, truncatedBy: 'time' };
    const names: Array<{ name: string; file: boolean; folder: boolean }> = [];
    try {
      const handle = await opendir(dir, { bufferSize: 64 });
      for await (const entry of handle) {
        if (++entries > limits.maxEntries) return { files, truncatedBy: 'entries' };
        names.push({ name: entry.name, file: entry.isFile(), folder: entry.isDirectory() });
        if (entries % 256 === 0) {
          if (Date.now() > deadline) return { files, truncatedBy: 'time' };
          await yieldToEventLoop();
        }
      }
    } catch {
      continue; // unreadable, vanished or not a folder
    }
    names.sort((a, b) => a.name.localeCompare(b.name));
    const below: Array<{ dir: string; depth: number }> = [];
    for (const { name, file, folder } of names) {
      const path = join(dir, name);
      if (file && name.endsWith('.agt')) {
        if (seen.has(path)) continue;
        if (files.length >= limits.maxAgentFiles) return { files, truncatedBy: 'agent_files' };
        seen.add(path);
        files.push(path);
      } else if (
        folder &&
        depth > 0 &&
        !name.startsWith('.') &&
        !SKIPPED_FOLDER_NAMES.has(name) &&
        !SKIPPED_SYSTEM_PATHS.has(path)
      ) {
        below.push({ dir: path, depth: depth - 1 });
      }
    }
    for (let i = below.length - 1; i >= 0; i--) stack.push(below[i]!);
    await yieldToEventLoop();
  }
  return { files, truncatedBy: null };
}

export async function autostart(kernel: AutostartDeps, trackedDirs: string[], maxDepth = 2): Promise<AutostartResult> {
  for (const dir of trackedDirs) {
    if (!isAbsolute(dir)) throw trackedDirNotAbsolute(dir);
  }
  // One time budget for the walk and the reading of the files it found (starting agents is not cut short).
  const deadline = Date.now() + AUTOSTART_LIMITS.timeBudgetMs;
  const scan = await findAgentFiles(trackedDirs, maxDepth, AUTOSTART_LIMITS, deadline);
  const { report, outOfTime } = await autostartFiles(kernel, scan.files, deadline);
  const truncatedBy = outOfTime ? 'time' : scan.truncatedBy;
  const result: AutostartResult = { ...report, truncated: false };
  if (truncatedBy) Object.assign(result, { truncated: true, truncatedBy });
  return result;
}

/**
 * The autostart of `files`, in order (also the extensions' `ctx.launcher.autostart`): eligible files are
 * loaded through the review gate and started, the others skipped with a reason or listed as failed.
 * Files not read before `deadline` are left out (`outOfTime`); starting is never cut short.
 */
export async function autostartFiles(
  kernel: AutostartDeps,
  files: readonly string[],
  deadline = Infinity,
): Promise<{ report: AutostartReport; outOfTime: boolean }> {
  const report: AutostartReport = { scanned: 0, started: [], skipped: [], failed: [] };
  for (const filePath of files) {
    // Give other requests their turn between files (a file's summary is read on the worker thread).
    await yieldToEventLoop();
    if (Date.now() > deadline) return { report, outOfTime: true };
    report.scanned += 1;
    const canonical = canonicalPath(filePath);
    const loaded = kernel.registry.byPath(canonical);
    if (loaded) {
      report.skipped.push({ filePath: canonical, name: loaded.name, reason: 'already_loaded', agentId: loaded.id });
      continue;
    }
    let name = filePath;
    try {
      const { config, passwordProtected } = await kernel.readSummary(filePath);
      name = config.name;
      const skip = (reason: SkipReason) =>
        report.skipped.push({ filePath: canonical, name, reason, agentId: config.id });
      if (kernel.registry.list().some((agent) => agent.id === config.id)) skip('already_loaded');
      else if (config.autostart !== true) skip('not_autostart');
      else if (passwordProtected) skip('password_protected');
      else if (!kernel.registry.reviews.isReviewed(config)) skip('unreviewed');
      else {
        const agent = await kernel.registry.load(filePath, { requireReview: true });
        const { startupTriggered } = await startAgent(kernel, agent);
        report.started.push({
          agentId: agent.id,
          filePath: agent.filePath ?? canonical,
          name: agent.name,
          startupTriggered,
        });
      }
    } catch (error) {
      report.failed.push({ filePath: canonical, name, error: (error as Error).message });
    }
  }
  return { report, outOfTime: false };
}
