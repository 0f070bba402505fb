/**
 * What the tracked folders hold: one entry per agent file (by real path) with the summary the kernel
 * read without loading it (`ctx.launcher.summarize`). A file is read again only when its size or
 * modification time changed. Reading is one file at a time, yielding in between (each read opens the
 * file synchronously in the kernel).
 */
import { stat } from 'node:fs/promises';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { AgentFileSummary, AgentLauncher } from '@agt/contracts';

export interface IndexEntry {
  filePath: string;
  /** The real path of the tracked folder it was found in. */
  folder: string;
  /** Null when the file could not be read as an agent file (`error` says why). */
  summary: AgentFileSummary | null;
  error?: string;
  mtimeMs: number;
  size: number;
}

export class AgentIndex {
  private readonly entries = new Map<string, IndexEntry>();

  constructor(private readonly launcher: AgentLauncher) {}

  get(filePath: string): IndexEntry | undefined {
    return this.entries.get(filePath);
  }

  all(): IndexEntry[] {
    return [...this.entries.values()];
  }

  /** Entries found in `folder` (a real path). */
  inFolder(folder: string): IndexEntry[] {
    return this.all().filter((entry) => entry.folder === folder);
  }

  /**
   * Reads the file's summary when it is new or changed; returns the entry, or undefined when the file
   * is gone (its entry is dropped then). `force` reads it even when size and time are unchanged.
   */
  async refresh(filePath: string, folder: string, force = false): Promise<IndexEntry | undefined> {
    const info = await stat(filePath).catch(() => null);
    if (info === null || !info.isFile()) {
      this.entries.delete(filePath);
      return undefined;
    }
    const known = this.entries.get(filePath);
    if (!force && known && known.mtimeMs === info.mtimeMs && known.size === info.size && known.summary !== null) {
      known.folder = folder;
      return known;
    }
    const entry: IndexEntry = { filePath, folder, summary: null, mtimeMs: info.mtimeMs, size: info.size };
    try {
      entry.summary = await this.launcher.summarize(filePath);
    } catch (error) {
      entry.error = error instanceof Error ? error.message : String(error);
    }
    this.entries.set(filePath, entry);
    return entry;
  }

  /**
   * Brings the entries of `folder` in line with a walk's `files`: new and changed files read, vanished ones dropped.
   */
  async sync(folder: string, files: readonly string[], shouldStop: () => boolean = () => false): Promise<void> {
    const found = new Set(files);
    for (const entry of this.inFolder(folder)) if (!found.has(entry.filePath)) this.entries.delete(entry.filePath);
    for (const filePath of files) {
      if (shouldStop()) return;
      await this.refresh(filePath, folder);
      await yieldToEventLoop();
    }
  }

  remove(filePath: string): IndexEntry | undefined {
    const entry = this.entries.get(filePath);
    this.entries.delete(filePath);
    return entry;
  }

  /** Drops every entry of folders not in `folders` (real paths). */
  retain(folders: ReadonlySet<string>): void {
    for (const entry of this.all()) if (!folders.has(entry.folder)) this.entries.delete(entry.filePath);
  }

  /** Files whose agent id, handle or name is `reference` (case-insensitive), without duplicates. */
  match(reference: string): string[] {
    const wanted = reference.toLowerCase();
    return this.all()
      .filter(
        ({ summary }) =>
          summary !== null &&
          [summary.id, summary.handle, summary.name].some((value) => value !== null && value.toLowerCase() === wanted),
      )
      .map((entry) => entry.filePath);
  }
}
