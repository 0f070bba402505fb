/**
 * Why this exists: libsql 0.5.x `Database.close()` does not finalize prepared statements, and every
 * statement holds its own reference to the connection, so the file descriptors (and the WAL shared-memory
 * lock) of a closed agent file stay open until the garbage collector happens to reclaim the statements
 * (tursodatabase/libsql-js issues #228 and #230; fixed upstream by PR #236, not yet released). A
 * long-running daemon that loads and unloads agents would leak descriptors and keep locks on files the
 * owner wants to move or that another daemon wants to load.
 *
 * After closing files we therefore drop every reference to their statements (see `Sql.dropStatements`)
 * and run one full collection, coalesced across closes in the same tick. The collector is obtained once
 * through V8's `expose-gc` flag, switched back off right away so nothing else sees a global `gc`.
 * Remove this module once a libsql release finalizes statements on close.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

let collect: (() => void) | null | undefined;

/** V8's full collection, or `null` where it cannot be had. Also used by ./settle-collection.ts. */
export function collector(): (() => void) | null {
  if (collect !== undefined) return collect;
  try {
    const existing = (globalThis as { gc?: () => void }).gc;
    if (typeof existing === 'function') {
      collect = existing;
    } else {
      v8.setFlagsFromString('--expose-gc');
      collect = vm.runInNewContext('gc') as () => void;
      v8.setFlagsFromString('--no-expose-gc');
    }
  } catch {
    collect = null;
  }
  return collect;
}

let pending: Promise<void> | undefined;

/**
 * Resolves once the connections of files closed so far are released (their finalizers run on the tick
 * after the collection). Calls in the same tick share one collection.
 */
export function releaseClosedHandles(): Promise<void> {
  pending ??= new Promise<void>((resolve) => {
    setImmediate(() => {
      pending = undefined;
      collector()?.();
      setImmediate(resolve);
    });
  });
  return pending;
}
