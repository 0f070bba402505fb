/**
 * Group commit for one agent file: writes asked for in the same event-loop turn (the requests read in one
 * poll phase, say a burst of chats) share one transaction, run in the check phase right after
 * (`setImmediate`), and each caller's promise settles once that transaction committed. The caller answers
 * only then, so what it promises (a 202 means the row is in the file) holds exactly as with a commit of
 * its own; the saving is the per-transaction work: the write lock (`BEGIN IMMEDIATE`, the WAL index
 * locks), the WAL frames and the commit, paid once per batch instead of once per write
 * (docs/performance.md, "Bursts of chats").
 *
 * A batch whose transaction fails is written again one write per transaction, so one bad write fails only
 * its own caller. Writes are synchronous (no awaits inside), as for {@link AgentFile.transaction}.
 */
import type { AgentFile } from './agent-file.js';

interface Pending {
  write: (file: AgentFile) => void;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class GroupCommit {
  private batch: Pending[] = [];

  /** `file`: the agent file now (read at each flush, so a reopened file is the one written). */
  constructor(private readonly file: () => AgentFile) {}

  /** Writes in the next shared transaction; resolves once it committed, rejects with the write's error. */
  add(write: (file: AgentFile) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.batch.push({ write, resolve, reject }) === 1) setImmediate(() => this.flush());
    });
  }

  /** Writes asked for and not committed yet. */
  get pending(): number {
    return this.batch.length;
  }

  private flush(): void {
    const batch = this.batch;
    this.batch = [];
    let file: AgentFile;
    try {
      file = this.file();
      file.transaction(() => {
        for (const pending of batch) pending.write(file);
      });
    } catch {
      for (const pending of batch) {
        try {
          const one = this.file();
          one.transaction(() => pending.write(one));
          pending.resolve();
        } catch (error) {
          pending.reject(error);
        }
      }
      return;
    }
    for (const pending of batch) pending.resolve();
  }
}
