/**
 * A running agent's file as its pages, read in memory on the agent's own connection (SQLite's
 * `sqlite_dbpage`, one read transaction: what was committed, the WAL included), for `ctx.agents.snapshots`.
 * Unlike `VACUUM INTO` it rebuilds nothing and writes no file: reading a 230 KB file's 56 pages takes about
 * 0.4 ms where the vacuumed copy took 4 to 18 ms (docs/fleet.md, "Replication"). The pages keep the file's own
 * layout, so two images of one file differ only in the pages a write changed.
 *
 * The live lease row does not travel: the lease table's root page (one leaf: the table holds one row) is
 * replaced by an empty leaf, so the image restored elsewhere is nobody's running file.
 */
import type { Sql } from '../agents/sql.js';

/** The b-tree page type of a table leaf (SQLite's file format, "B-tree Pages"). */
const TABLE_LEAF = 0x0d;

export interface PageImage {
  /** The pages, in order: the file as SQLite would write it with the WAL checkpointed. */
  data: Buffer;
  pageSize: number;
  schemaVersion: number;
  /** The file has `agt_config` (an agent file). */
  marker: boolean;
}

/**
 * The image, or undefined when it cannot be read here: the connection is inside a transaction (its own
 * uncommitted writes would show), or the lease table's root is not a single leaf page.
 */
export function readPageImage(sql: Sql): PageImage | undefined {
  const db = sql.db;
  if (db.inTransaction) return undefined;
  db.exec('BEGIN');
  try {
    const pageSize = Number(sql.one<{ page_size: number }>('PRAGMA page_size')?.page_size ?? 0);
    const schemaVersion = Number(sql.one<{ user_version: number }>('PRAGMA user_version')?.user_version ?? 0);
    const tables = sql.all<{ name: string; rootpage: number }>(
      "SELECT name, rootpage FROM sqlite_master WHERE type = 'table' AND name IN ('agt_config', 'agt_lease')",
    );
    const rows = sql.all<{ data: Buffer }>('SELECT data FROM sqlite_dbpage ORDER BY pgno');
    const data = Buffer.concat(
      rows.map((row) => row.data),
      rows.length * pageSize,
    );
    const lease = tables.find((table) => table.name === 'agt_lease')?.rootpage;
    if (lease !== undefined && !emptyLeaf(data, pageSize, Number(lease))) return undefined;
    return { data, pageSize, schemaVersion, marker: tables.some((table) => table.name === 'agt_config') };
  } finally {
    db.exec('COMMIT');
  }
}

/** Makes page `pgno` an empty table leaf, as SQLite zeroes a page; false when it is not a table leaf. */
function emptyLeaf(data: Buffer, pageSize: number, pgno: number): boolean {
  const start = (pgno - 1) * pageSize;
  if (pgno < 2 || start + pageSize > data.length || data[start] !== TABLE_LEAF) return false;
  // Bytes reserved at the end of each page (page 1's header, offset 20), outside the b-tree's space.
  const usable = pageSize - (data[20] ?? 0);
  data.fill(0, start, start + pageSize);
  data[start] = TABLE_LEAF;
  // The cell content area starts at the end of the usable space (65536 is written as 0).
  data.writeUInt16BE(usable === 65_536 ? 0 : usable, start + 5);
  return true;
}
