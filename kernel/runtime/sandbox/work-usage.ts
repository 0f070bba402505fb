/**
 * The bound on an agent's work folder (settings `commandLimits.workBytes`): its disk use is measured
 * after each of the agent's commands (folder-size.ts) and a command is refused (`work_folder_full`) while
 * the last measure is over the bound. A refused agent stays refused until the owner frees space in the
 * folder or raises the bound: each refusal measures again, so either applies at the next command.
 *
 * A measure is taken only while none of the agent's commands runs: once one has ended, a new command
 * waits for the others to end and for the measure. In a sandbox nothing of the agent is then left to
 * change the tree under the walk (its pid namespace is gone with its command), and a stream of
 * overlapping commands cannot keep the measure from being taken. A long-lived process beside them (a
 * sandboxed MCP server) is not counted: it starts only under the bound, and what it wrote is measured once it
 * ended and at the next command's end (a walk it races sees a tree in change, never follows a link).
 */
import { workFolderFull } from '../errors.js';
import { folderSize, type FolderSize } from './folder-size.js';

/** Files and folders a work folder may hold: bounds the walk's time, and the inodes one agent takes. */
export const WORK_MAX_ENTRIES = 1_000_000;

interface AgentWork {
  running: number;
  /** A command ended after the last measure (or none was taken since the daemon started). */
  stale: boolean;
  last?: FolderSize;
  measuring?: Promise<FolderSize>;
  /** Resolved when `running` drops to 0. */
  idle?: { promise: Promise<void>; resolve(): void };
}

const isOver = (size: FolderSize, limit: number) => size.tooManyEntries || size.bytes > limit;

export class WorkUsage {
  /** By work folder: what is measured (and whatever names the agent, one folder is one agent's). */
  private readonly folders = new Map<string, AgentWork>();

  /** `limit`: the bound in bytes that applies now (read at each measure and check). */
  constructor(private readonly limit: () => number) {}

  private work(folder: string): AgentWork {
    let work = this.folders.get(folder);
    if (!work) this.folders.set(folder, (work = { running: 0, stale: true }));
    return work;
  }

  /**
   * Before a command: waits for a measure that is due, then counts the command as running, or refuses it
   * (`work_folder_full`) when the folder is over the bound. Every admitted command must be released.
   */
  async admit(folder: string): Promise<void> {
    const work = this.work(folder);
    for (;;) {
      if (work.measuring) {
        await work.measuring.catch(() => {});
        continue;
      }
      const limit = this.limit();
      if (!work.stale && work.last?.complete && !isOver(work.last, limit)) break;
      if (work.running > 0) {
        work.idle ??= withResolvers();
        await work.idle.promise;
        continue;
      }
      // Due, or over (measured again: the owner may have freed space or raised the bound since).
      const size = await this.measure(work, folder);
      if (isOver(size, this.limit()))
        throw workFolderFull(this.limit(), size.tooManyEntries ? { entries: WORK_MAX_ENTRIES } : { bytes: size.bytes });
    }
    work.running += 1;
  }

  /** After an admitted command: the folder is measured once none of the agent's commands runs. */
  release(folder: string): void {
    const work = this.work(folder);
    work.running -= 1;
    work.stale = true;
    if (work.running > 0) return;
    work.idle?.resolve();
    work.idle = undefined;
    // A failure leaves the measure due: the next command takes it again and fails with the error.
    this.measure(work, folder).catch(() => {});
  }

  /**
   * Before a long-lived process that writes beside the commands (a sandboxed MCP server): refused
   * (`work_folder_full`) when the last measure is over the bound, measured first when none is known and no
   * command runs. It never waits for commands, and they never wait for it (it is not counted as running).
   */
  async check(folder: string): Promise<void> {
    const work = this.work(folder);
    if (work.measuring) await work.measuring.catch(() => {});
    else if (work.running === 0 && (work.stale || !work.last)) await this.measure(work, folder);
    const limit = this.limit();
    if (work.last && isOver(work.last, limit))
      throw workFolderFull(
        limit,
        work.last.tooManyEntries ? { entries: WORK_MAX_ENTRIES } : { bytes: work.last.bytes },
      );
  }

  /** After such a process ended: what it wrote is measured (now, or once the commands running have ended). */
  changed(folder: string): void {
    const work = this.work(folder);
    work.stale = true;
    if (work.running === 0) this.measure(work, folder).catch(() => {});
  }

  private measure(work: AgentWork, folder: string): Promise<FolderSize> {
    const measuring = folderSize(folder, this.limit(), WORK_MAX_ENTRIES)
      .then((size) => {
        work.last = size;
        work.stale = false;
        return size;
      })
      .finally(() => {
        if (work.measuring === measuring) work.measuring = undefined;
      });
    work.measuring = measuring;
    return measuring;
  }
}

function withResolvers(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}
