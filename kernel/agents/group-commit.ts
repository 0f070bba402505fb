/**
 * Group commit for one agent file: writes asked for in the same event-loop turn (the requests read in one
 * poll phase, say a burst of chats) share one transaction (up to {@link COMMIT_SLICE}; more commit in
 * slices, in order), run in a check phase after them (one write slice of the daemon's per event-loop
 * turn: kernel/write-slices.ts), and each caller's promise settles once its transaction committed. The caller answers
 * only then, so what it promises (a 202 means the row is in the file) holds exactly as with a commit of
 * its own; the saving is the per-transaction work: the write lock (`BEGIN IMMEDIATE`, the WAL index
 * locks), the WAL frames and the commit, paid once per batch instead of once per write
 * (docs/performance.md, "Bursts of chats").
 *
 * Right after the commit each write's `committed` callback runs, in order (the accepted chats are queued
 * there, all of them, so a burst joins one turn); the callers are then released {@link RELEASE_SLICE} per
 * event-loop turn, so the answers of a large batch (a 202 each) go out between other requests instead of
 * holding the loop for all of them at once.
 *
 * A batch whose transaction fails is written again one write per transaction, so one bad write fails only
 * its own caller. Writes are synchronous (no awaits inside), as for {@link AgentFile.transaction}.
 */
import type { AgentFile } from './agent-file.js';
import { nextWriteSlice } from '../write-slices.js';

interface Pending {
  write: (file: AgentFile) => void;
  committed: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Callers released per event-loop turn after a commit: their answers go out a slice at a time. */
const RELEASE_SLICE = 32;
/**
 * Writes per shared transaction: a larger batch (200 chats read in one poll phase) commits in slices,
 * one per event-loop turn, so the loop serves other requests between them.
 */
export const COMMIT_SLICE = 64;

export class GroupCommit {
  /** Writes waiting, oldest first (a flush takes up to {@link COMMIT_SLICE} of them). */
  private batch: Pending[] = [];
  private scheduled = false;

  /** `file`: the agent file now (read at each flush, so a reopened file is the one written). */
  constructor(private readonly file: () => AgentFile) {}

  /**
   * Writes in the next shared transaction; once it committed, `committed` runs (synchronously, in order
   * with the batch's others) and the promise settles with its result, or rejects with the write's error.
   */
  add<T>(write: (file: AgentFile) => void, committed: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = { write, committed, resolve: resolve as (value: unknown) => void, reject };
      this.batch.push(pending);
      if (!this.scheduled) {
        this.scheduled = true;
        void nextWriteSlice().then(() => this.flush());
      }
    });
  }

  /** Writes asked for and not committed yet. */
  get pending(): number {
    return this.batch.length;
  }

  private flush(): void {
    const batch = this.batch.splice(0, COMMIT_SLICE);
    // The rest in a later event-loop turn; writes asked for meanwhile queue after them.
    if (this.batch.length > 0) void nextWriteSlice().then(() => this.flush());
    else this.scheduled = false;
    const settled: Array<() => void> = [];
    let file: AgentFile | undefined;
    try {
      file = this.file();
      const shared = file;
      shared.transaction(() => {
        for (const pending of batch) pending.write(shared);
      });
    } catch {
      file = undefined;
    }
    for (const pending of batch) {
      if (file === undefined) {
        try {
          const one = this.file();
          one.transaction(() => pending.write(one));
        } catch (error) {
          settled.push(() => pending.reject(error));
          continue;
        }
      }
      try {
        const value = pending.committed();
        settled.push(() => pending.resolve(value));
      } catch (error) {
        settled.push(() => pending.reject(error));
      }
    }
    this.release(settled);
  }

  /**
   * Settles the callers a slice per event-loop turn: what each does next (its answer) waits, not the work
   * already done, so other requests are served between slices.
   */
  private release(settled: Array<() => void>): void {
    for (const settle of settled.splice(0, RELEASE_SLICE)) settle();
    if (settled.length > 0) setImmediate(() => this.release(settled));
  }
}
