/**
 * The user id each agent's commands run as inside containers. In the shared container every agent has
 * its own, so one agent's work dir (mode 0700) is closed to the others; ids are handed out once and
 * kept in `<dataDir>/compute/uids.json`, so an agent finds its files again after a restart.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Below this are the image's system users; far above any host user a bind could expose. */
const FIRST_UID = 200_000;

export class UidTable {
  private table?: Map<string, number>;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly file: string) {}

  private async load(): Promise<Map<string, number>> {
    if (this.table) return this.table;
    let entries: [string, number][] = [];
    try {
      const parsed = JSON.parse(await readFile(this.file, 'utf8')) as Record<string, unknown>;
      entries = Object.entries(parsed).filter(
        (entry): entry is [string, number] => Number.isSafeInteger(entry[1]) && (entry[1] as number) >= FIRST_UID,
      );
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    this.table ??= new Map(entries);
    return this.table;
  }

  /** The agent's uid, handed out (and persisted) on first use. */
  async uidOf(agentId: string): Promise<number> {
    const table = await this.load();
    const known = table.get(agentId);
    if (known !== undefined) return known;
    const uid = Math.max(FIRST_UID - 1, ...table.values()) + 1;
    table.set(agentId, uid);
    const snapshot = JSON.stringify(Object.fromEntries(table));
    // Writes are chained so an older snapshot never lands after a newer one.
    this.writing = this.writing
      .catch(() => {})
      .then(async () => {
        await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
        await writeFile(`${this.file}.tmp`, snapshot, { mode: 0o600 });
        await rename(`${this.file}.tmp`, this.file);
      });
    await this.writing;
    return uid;
  }
}
