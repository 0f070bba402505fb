/**
 * The host user id each agent's commands run as when the daemon runs as root: handed out once and
 * kept in `<dataDir>/sandbox/uids.json` (0600, in a 0700 folder), so an agent's work folder is still its
 * own after a restart. The group id is the same number. (The compute extension keeps its own table
 * for its containers; the kernel does not share it.)
 *
 * The range starts at 1,900,000,000: above the ranges hosts hand out to people (1000-60000), to
 * systemd's dynamic users and to nspawn containers (up to 1,879,048,191), and below 2^31 (tools that
 * read ids as signed numbers). No `/etc/passwd` entry is needed: the kernel does not ask for one.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export const FIRST_SANDBOX_UID = 1_900_000_000;
const LAST_SANDBOX_UID = 2_000_000_000;

export class SandboxUids {
  private table?: Map<string, number>;
  private loading?: Promise<Map<string, number>>;
  private writing: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {}

  private load(): Promise<Map<string, number>> {
    this.loading ??= (async () => {
      let entries: [string, number][] = [];
      try {
        const parsed = JSON.parse(await readFile(this.file, 'utf8')) as Record<string, unknown>;
        const valid = (uid: unknown): uid is number =>
          Number.isSafeInteger(uid) && (uid as number) >= FIRST_SANDBOX_UID && (uid as number) < LAST_SANDBOX_UID;
        entries = Object.entries(parsed).filter((entry): entry is [string, number] => valid(entry[1]));
      } catch (error) {
        // Missing: nothing handed out yet. Unreadable JSON: refuse rather than hand the same uid to two agents.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      this.table = new Map(entries);
      return this.table;
    })();
    return this.loading;
  }

  /** The agent's uid, handed out (and persisted before it is used) on first call. */
  async uidOf(agentId: string): Promise<number> {
    const table = await this.load();
    const known = table.get(agentId);
    if (known !== undefined) return known;
    const uid = Math.max(FIRST_SANDBOX_UID - 1, ...table.values()) + 1;
    if (uid >= LAST_SANDBOX_UID) throw new Error('no sandbox user id left');
    table.set(agentId, uid);
    const snapshot = JSON.stringify(Object.fromEntries(table));
    // Writes are chained so an older snapshot never lands after a newer one.
    this.writing = this.writing
      .catch(() => {})
      .then(async () => {
        await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
        const temp = `${this.file}.${process.pid}.tmp`;
        await writeFile(temp, snapshot, { mode: 0o600 });
        await rename(temp, this.file);
      });
    await this.writing;
    return uid;
  }
}
