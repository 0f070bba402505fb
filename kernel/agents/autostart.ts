/**
 * The autostart scan (`POST /agents/autostart`, spec appendix): agent files under the given folders
 * that are marked `autostart`, reviewed on this machine and not password-protected are loaded and
 * started; the others are skipped with a reason (`already_loaded`, `not_autostart`,
 * `password_protected`, `unreviewed`); files that cannot be read are reported as failed.
 */
import { readdirSync, type Dirent } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { AgtError } from '../../contracts/errors.js';
import { isPasswordProtected } from '../credentials/index.js';
import type { Kernel } from '../kernel.js';
import { AgentFile } from './agent-file.js';
import { startAgent } from './start-agent.js';

export const SKIP_REASONS = ['already_loaded', 'not_autostart', 'password_protected', 'unreviewed'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export interface AutostartResult {
  scanned: number;
  started: Array<{ agentId: string; filePath: string; name: string; startupTriggered: boolean }>;
  skipped: Array<{ filePath: string; name: string; reason: SkipReason; agentId?: string }>;
  failed: Array<{ filePath: string; name: string; error: string }>;
}

/** `.agt` files under `dir`, descending at most `maxDepth` folder levels; unreadable folders are skipped. */
export function findAgentFiles(dir: string, maxDepth: number): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isFile() && entry.name.endsWith('.agt')) out.push(path);
    else if (entry.isDirectory() && maxDepth > 0 && !entry.name.startsWith('.')) out.push(...findAgentFiles(path, maxDepth - 1));
  }
  return out;
}

/** What a file says about itself, read without loading it (read-only: no migration, no lease). */
async function inspectFile(filePath: string) {
  const file = AgentFile.open(filePath, { readonly: true });
  try {
    const config = file.config.get()!;
    return { config, passwordProtected: isPasswordProtected(file) };
  } finally {
    await file.close();
  }
}

export async function autostart(kernel: Kernel, trackedDirs: string[], maxDepth = 2): Promise<AutostartResult> {
  for (const dir of trackedDirs) {
    if (!isAbsolute(dir)) throw new AgtError('bad_request', `trackedDirs must be absolute paths: ${dir}`);
  }
  const files = [...new Set(trackedDirs.flatMap((dir) => findAgentFiles(dir, maxDepth)))];
  const result: AutostartResult = { scanned: files.length, started: [], skipped: [], failed: [] };
  for (const filePath of files) {
    const loaded = kernel.registry.list().find((agent) => agent.filePath === filePath);
    if (loaded) {
      result.skipped.push({ filePath, name: loaded.name, reason: 'already_loaded', agentId: loaded.id });
      continue;
    }
    let name = filePath;
    try {
      const { config, passwordProtected } = await inspectFile(filePath);
      name = config.name;
      const skip = (reason: SkipReason) => result.skipped.push({ filePath, name, reason, agentId: config.id });
      if (config.autostart !== true) skip('not_autostart');
      else if (passwordProtected) skip('password_protected');
      else if (!kernel.registry.reviews.isReviewed(config)) skip('unreviewed');
      else {
        const agent = await kernel.registry.load(filePath, { requireReview: true });
        const { startupTriggered } = await startAgent(kernel, agent);
        result.started.push({ agentId: agent.id, filePath: agent.filePath ?? filePath, name: agent.name, startupTriggered });
      }
    } catch (error) {
      result.failed.push({ filePath, name, error: (error as Error).message });
    }
  }
  return result;
}
