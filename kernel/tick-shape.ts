/**
 * Keeps one `process.nextTick` task object alive for the life of the process, imported first by the
 * `agtd` entry (kernel/main.ts). Why: Node's `nextTick` builds each task as an object literal
 * with two computed symbol keys; V8 records the hidden class it sees at each key of such a literal and,
 * the first time that class changes, turns the site megamorphic for good (a runtime call per key from
 * then on). The classes of those objects are reachable only through short-lived tasks, so a full GC that
 * finds none alive drops them, the next task builds new ones, and the sites go megamorphic: in the daemon
 * (tens of MB of heap, several full GCs during start) every `nextTick` then cost ~320 ns against ~65 ns,
 * about 8 per HTTP request (~4 µs, as much as the rest of the kernel's own work on `/health`). One live
 * task object keeps its classes alive, so the sites stay monomorphic. The async hook exists only for the
 * one `nextTick` call below (disabled before any other task is queued).
 */
import { createHook } from 'node:async_hooks';

const pinned: object[] = [];
const hook = createHook({
  init(_asyncId, type, _triggerAsyncId, resource) {
    if (type === 'TickObject' && pinned.length === 0) pinned.push(resource);
  },
}).enable();
process.nextTick(() => {});
hook.disable();

/** The task object kept (exported so that nothing may consider it unused). */
export const pinnedTickObject: object | undefined = pinned[0];
