/**
 * Why this exists: libsql 0.5.x `Database.close()` does not finalize prepared statements, and every
 * statement holds its own reference to the connection, so the file descriptors (and the WAL shared-memory
 * lock) of a closed agent file stay open until the garbage collector happens to reclaim the statements
 * (tursodatabase/libsql-js issues #228 and #230; fixed upstream by PR #236, not yet released). A
 * long-running daemon that loads and unloads agents would leak descriptors and keep locks on files the
 * owner wants to move or that another daemon wants to load.
 *
 * After closing files we therefore drop every reference to their statements (see `Sql.dropStatements`)
 * and run one full collection (concurrent marking, see collectOnce), coalesced across closes in the same tick. The collector is obtained once
 * through V8's `expose-gc` flag, switched back off right away so nothing else sees a global `gc`.
 * Remove this module once a libsql release finalizes statements on close.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

/** V8's `gc`; with `execution: 'async'` it marks concurrently and resolves once the collection is done. */
type Collector = (options?: { type: 'major' | 'minor'; execution: 'sync' | 'async' }) => void | Promise<void>;

let collect: Collector | null | undefined;

function collector(): Collector | null {
  if (collect !== undefined) return collect;
  try {
    const existing = (globalThis as { gc?: Collector }).gc;
    if (typeof existing === 'function') {
      collect = existing;
    } else {
      v8.setFlagsFromString('--expose-gc');
      collect = vm.runInNewContext('gc') as Collector;
      v8.setFlagsFromString('--no-expose-gc');
    }
  } catch {
    collect = null;
  }
  return collect;
}

let pending: Promise<void> | undefined;
let running: Promise<void> = Promise.resolve();

/**
 * Resolves once the connections of files closed so far are released (their finalizers run on the tick
 * after the collection). Calls in the same tick share one collection; a call made while one runs gets the
 * next (a concurrent collection keeps what was reachable when it began).
 */
export function releaseClosedHandles(): Promise<void> {
  pending ??= new Promise<void>((resolve) => {
    setImmediate(() => {
      pending = undefined;
      running = running.then(collectOnce);
      void running.then(() => setImmediate(resolve));
    });
  });
  return pending;
}

/**
 * One full collection with concurrent marking: a synchronous one held the event loop 13-57 ms (every
 * request waited, e.g. once per agent file a tracked-folder walk summarizes); this one releases the same
 * handles with pauses of a few ms.
 */
async function collectOnce(): Promise<void> {
  try {
    await collector()?.({ type: 'major', execution: 'async' });
  } catch {
    // A collection that cannot run leaves the handles to the next ordinary one.
  }
}
