/**
 * Agent SQL (`db_query`, `db_execute`) runs in a child process, never on the daemon's event loop and
 * never on the daemon's own connection to the agent file.
 *
 * One child per agent (`sql-child.mjs`, plain JavaScript importing only libsql and `sql-policy.mjs`), started on the
 * first call, with its own connection (`trusted_schema = OFF`, SQLite's heap capped). Calls run one at a time in
 * arrival order. Past a call's time limit (`limits.sql_timeout_ms`, counted from the call's turn, a wait for a process
 * slot included) the child is SIGKILLed: SQLite's write-ahead log keeps the file consistent, the half-done transaction
 * is simply not there, and the next call gets a fresh child. The child also kills itself at the limit plus 1 s and
 * when the daemon is gone (a watchdog thread). Row and size caps apply inside the child while it iterates, so a huge
 * result never crosses the pipe.
 *
 * Across agents, children are bounded by the daemon's SQL process slots (`sql-slots.ts`, settings `sqlMaxProcesses`):
 * while calls wait, an idle child is asked to leave and a child that finishes a call leaves, so the slots go round in
 * arrival order. Each child's memory is bounded too (V8's heap and SQLite's: see sql-child.mjs).
 *
 * What the child lets a statement do is in `sql-policy.mjs`: the statement kind by its first keyword
 * (PRAGMA and friends act while compiling), then SQLite's compiled program (`EXPLAIN`) against
 * allow-lists of opcodes, functions and `local_*` b-trees, then for CREATE/DROP/ALTER the schema effect,
 * all in one transaction (`BEGIN IMMEDIATE` to write, `BEGIN` plus `query_only` to read).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitAtMost } from '../../deadline.js';
import { daemonSqlSlots, type SlotRequest, type SqlSlot, type SqlSlots } from './sql-slots.js';
import {
  agentUnloading,
  sqlFailed,
  sqlSandboxExited,
  sqlSandboxSlowStart,
  sqlSandboxStartFailed,
  sqlTimedOut,
  stoppedWhileSqlRan,
} from '../errors.js';

import { SQL_DEFAULT_TIMEOUT_MS } from '../../agents/limit-defaults.js';
export { SQL_DEFAULT_TIMEOUT_MS };
export const SQL_MAX_TIMEOUT_MS = 60_000;
export const SQL_MAX_ROWS = 500;
export const SQL_MAX_RESULT_BYTES = 256 * 1024;
/** The most one call may ask for with its own `maxRows` / `maxBytes` (its reply is parsed on the event loop). */
export const SQL_CALL_MAX_ROWS = 1_000;
export const SQL_CALL_MAX_BYTES = 1024 * 1024;
export const SQL_IDLE_MS = 30_000;
/** How long a started child may take to begin a call before it is considered stuck. */
const START_GRACE_MS = 15_000;
/** How long to wait for a child to exit after SIGKILL or disconnect. */
const EXIT_WAIT_MS = 3_000;
const STDERR_KEEP = 2_000;

export type SqlParam = string | number | boolean | null;
export type SqlMode = 'query' | 'execute';

export interface SqlCall {
  sql: string;
  params?: SqlParam[];
  mode: SqlMode;
  /** Default {@link SQL_DEFAULT_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Aborting stops the call (a running statement's child is killed). */
  signal?: AbortSignal;
  /** Friendly early refusals in the child (default true); tests turn them off to prove the boundary without them. */
  hints?: boolean;
  /** This call's row cap (query) instead of the sandbox's; at most {@link SQL_CALL_MAX_ROWS}. */
  maxRows?: number;
  /**
   * This call's result-size cap in bytes of JSON (query) instead of the sandbox's; at most {@link SQL_CALL_MAX_BYTES}.
   */
  maxBytes?: number;
}

export interface SqlQueryResult {
  /** The statement's result columns (also when no row came back). */
  columns: string[];
  rows: Record<string, unknown>[];
  truncated: boolean;
  truncatedBy: 'rows' | 'bytes' | null;
}

export interface SqlExecuteResult {
  changes: number;
  lastInsertRowid: number;
}

export interface SqlSandboxOptions {
  /** Idle time after which the child exits (default {@link SQL_IDLE_MS}). */
  idleMs?: number;
  maxRows?: number;
  maxBytes?: number;
  /** The child script (tests may substitute one). */
  childUrl?: URL;
  /** The SQL process slots to take children from (default: the daemon's, {@link daemonSqlSlots}). */
  slots?: SqlSlots;
  /**
   * The agent's storage quota in pages, read at every call (kernel/storage/quota.ts): the child's
   * connection runs the call under `PRAGMA max_page_count` of it, so SQLite refuses to grow the file
   * past it (`storage_quota_exceeded`). Undefined: no quota.
   */
  maxPageCount?: () => number | undefined;
}

interface ChildReply {
  id?: number;
  started?: boolean;
  ok?: boolean;
  code?: string;
  message?: string;
  columns?: string[];
  rows?: Record<string, unknown>[];
  truncated?: boolean;
  truncatedBy?: 'rows' | 'bytes' | null;
  changes?: number;
  lastInsertRowid?: number;
}

interface Pending {
  id: number;
  message: Record<string, unknown>;
  /** The call's whole limit (waiting for a slot included): what a timeout reports. */
  limitMs: number;
  /** What is left of it for running, once the call has a child. */
  runMs: number;
  /** When the call was sent to its child (performance.now()). */
  sentAt?: number;
  /** Waiting for a slot (a new child) when set. */
  slotRequest?: SlotRequest;
  resolve(reply: ChildReply): void;
  reject(error: unknown): void;
  timer?: NodeJS.Timeout;
  signal?: AbortSignal;
  onAbort?: () => void;
}

interface Child {
  process: ChildProcess;
  exited: Promise<void>;
  stderr: string;
  gone: boolean;
  /** Since when it has had nothing to run (performance.now()); undefined while it runs a call. */
  idleSince?: number;
}

/** One agent's SQL child. */
export class SqlSandbox {
  private child: Child | undefined;
  private readonly queue: Pending[] = [];
  private current: Pending | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private closed = false;
  private readonly idleMs: number;
  private readonly maxRows: number;
  private readonly maxBytes: number;
  private readonly childUrl: URL;
  private readonly slots: SqlSlots;
  private readonly maxPageCount: () => number | undefined;

  constructor(
    private readonly filePath: string,
    options: SqlSandboxOptions = {},
  ) {
    this.idleMs = options.idleMs ?? SQL_IDLE_MS;
    this.maxRows = options.maxRows ?? SQL_MAX_ROWS;
    this.maxBytes = options.maxBytes ?? SQL_MAX_RESULT_BYTES;
    this.childUrl = options.childUrl ?? new URL('./sql-child.mjs', import.meta.url);
    this.slots = options.slots ?? daemonSqlSlots;
    this.maxPageCount = options.maxPageCount ?? (() => undefined);
  }

  /** The pid of the running child, if any (tests). */
  get pid(): number | undefined {
    return this.child && !this.child.gone ? this.child.process.pid : undefined;
  }

  async query(call: Omit<SqlCall, 'mode'>): Promise<SqlQueryResult> {
    const reply = await this.run({ ...call, mode: 'query' });
    return {
      columns: reply.columns ?? [],
      rows: reply.rows ?? [],
      truncated: reply.truncated === true,
      truncatedBy: reply.truncatedBy ?? null,
    };
  }

  async execute(call: Omit<SqlCall, 'mode'>): Promise<SqlExecuteResult> {
    const reply = await this.run({ ...call, mode: 'execute' });
    return { changes: reply.changes ?? 0, lastInsertRowid: reply.lastInsertRowid ?? 0 };
  }

  private run(call: SqlCall): Promise<ChildReply> {
    if (this.closed) return Promise.reject(agentUnloading());
    if (call.signal?.aborted) return Promise.reject(stoppedWhileSqlRan());
    const timeoutMs = Math.min(Math.max(1, Math.floor(call.timeoutMs ?? SQL_DEFAULT_TIMEOUT_MS)), SQL_MAX_TIMEOUT_MS);
    const id = this.nextId++;
    const message = {
      op: 'run',
      id,
      sql: call.sql,
      // libsql cannot bind booleans (it aborts the process): SQLite stores them as 0/1 anyway.
      params: (call.params ?? []).map((value) => (typeof value === 'boolean' ? (value ? 1 : 0) : value)),
      mode: call.mode,
      maxRows: callCap(call.maxRows, this.maxRows, SQL_CALL_MAX_ROWS),
      maxBytes: callCap(call.maxBytes, this.maxBytes, SQL_CALL_MAX_BYTES),
      timeoutMs,
      hints: call.hints !== false,
      maxPageCount: this.maxPageCount() ?? null,
    };
    return new Promise<ChildReply>((resolve, reject) => {
      const entry: Pending = {
        id,
        message,
        limitMs: timeoutMs,
        runMs: timeoutMs,
        resolve,
        reject,
        signal: call.signal,
      };
      if (call.signal) {
        entry.onAbort = () => void this.abort(entry);
        call.signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.queue.push(entry);
      this.pump();
    });
  }

  private pump(): void {
    if (this.current || this.closed) return;
    const entry = this.queue.shift();
    if (!entry) {
      if (this.child) this.child.idleSince ??= performance.now();
      this.armIdle();
      return;
    }
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.current = entry;
    if (this.child && !this.child.gone) {
      this.send(entry, this.child);
      return;
    }
    // A new child needs one of the daemon's SQL process slots. The wait counts against the call's own
    // limit: past it the call fails with the usual timeout and no child is started for it.
    const waitStarted = performance.now();
    const request = this.slots.request();
    entry.slotRequest = request;
    entry.timer = setTimeout(() => void this.overran(entry, 'run'), entry.limitMs);
    void request.granted.then((slot) => {
      if (this.current !== entry || entry.slotRequest !== request) {
        slot.release();
        return;
      }
      entry.slotRequest = undefined;
      clearTimeout(entry.timer);
      entry.runMs = Math.max(1, Math.floor(entry.limitMs - (performance.now() - waitStarted)));
      entry.message.timeoutMs = entry.runMs;
      let child: Child;
      try {
        child = this.spawn(slot);
      } catch (error) {
        slot.release();
        this.finish(entry);
        entry.reject(sqlSandboxStartFailed(error));
        this.pump();
        return;
      }
      this.send(entry, child);
    });
  }

  private send(entry: Pending, child: Child): void {
    child.idleSince = undefined;
    try {
      entry.sentAt = performance.now();
      child.process.send(entry.message);
    } catch (error) {
      this.finish(entry);
      entry.reject(sqlSandboxStartFailed(error));
      void this.discardChild().then(() => this.pump());
      return;
    }
    // Until the child says it started the call (a fresh child first loads libsql and opens the file).
    // (The call's timers are not unref'd: a call in flight keeps the process alive, the idle child does not.)
    entry.timer = setTimeout(() => void this.overran(entry, 'start'), START_GRACE_MS + entry.runMs);
  }

  /** After a call: while other calls wait for a slot, this child gives its slot back (they go first). */
  private next(): void {
    if (this.child && this.slots.contended) void this.retire();
    this.pump();
  }

  /** Forks the agent's child in the slot it was granted; the slot returns when the process has exited. */
  private spawn(slot: SqlSlot): Child {
    const proc = fork(fileURLToPath(this.childUrl), [this.filePath], {
      // No tsx loader, no inherited flags, no environment: the child needs only libsql. `--expose-gc`
      // lets it finalize statements before DROP (see sql-child.mjs).
      execArgv: ['--expose-gc', '--max-old-space-size=96'],
      env: {},
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'json',
    });
    const child: Child = { process: proc, stderr: '', gone: false, exited: Promise.resolve() };
    slot.occupy({
      state: () => (this.child !== child || child.gone ? 'leaving' : (child.idleSince ?? 'busy')),
      evict: () => {
        if (this.child === child && !this.current) void this.retire();
      },
    });
    let ended!: () => void;
    child.exited = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const gone = (code: number | null, signal: NodeJS.Signals | null) => {
      if (child.gone) return;
      child.gone = true;
      slot.release();
      ended();
      this.childExited(child, code, signal);
    };
    proc.once('exit', gone);
    proc.on('error', () => {
      // A process that never started (no pid) sends no 'exit'; otherwise 'exit' follows (or the send fails).
      if (proc.pid === undefined) gone(null, null);
    });
    proc.stderr?.on('data', (chunk: Buffer) => {
      child.stderr = (child.stderr + chunk.toString('utf8')).slice(-STDERR_KEEP);
    });
    proc.on('message', (reply: ChildReply) => this.onReply(child, reply));
    // Neither the process nor its pipes keep the daemon alive.
    proc.unref();
    proc.channel?.unref();
    (proc.stderr as { unref?: () => void } | null)?.unref?.();
    this.child = child;
    return child;
  }

  private onReply(child: Child, reply: ChildReply): void {
    if (child !== this.child) return;
    const entry = this.current;
    if (!entry || reply.id !== entry.id) return;
    if (reply.started) {
      clearTimeout(entry.timer);
      entry.timer = setTimeout(() => void this.overran(entry, 'run'), entry.runMs);
      return;
    }
    this.finish(entry);
    if (reply.ok) entry.resolve(reply);
    else entry.reject(sqlFailed(reply.code, reply.message));
    this.next();
  }

  /**
   * The current call passed its limit (running, or still waiting for a slot): its child, if any, is killed (the only
   * way to stop a statement).
   */
  private async overran(entry: Pending, phase: 'start' | 'run'): Promise<void> {
    if (this.current !== entry) return;
    this.finish(entry);
    await this.discardChild();
    entry.reject(phase === 'run' ? sqlTimedOut(entry.limitMs) : sqlSandboxSlowStart());
    this.pump();
  }

  private async abort(entry: Pending): Promise<void> {
    const queued = this.queue.indexOf(entry);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      this.finish(entry);
      entry.reject(stoppedWhileSqlRan());
      return;
    }
    if (this.current !== entry) return;
    this.finish(entry);
    await this.discardChild();
    entry.reject(stoppedWhileSqlRan());
    this.pump();
  }

  /** The child died on its own (a crash, the watchdog, an out-of-memory kill). */
  private childExited(child: Child, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child) return;
    this.child = undefined;
    const entry = this.current;
    if (!entry) return;
    this.finish(entry);
    const why = signal ? `signal ${signal}` : `code ${code}`;
    const detail = child.stderr.trim().split('\n').slice(-3).join(' | ');
    // Killed past the call's limit: the child's watchdog (armed when the call reaches it, for the limit plus a
    // grace) beats this daemon's timer when a busy machine delays the daemon by more than the grace; that is the
    // time limit, not a crash.
    const overran =
      signal === 'SIGKILL' && entry.sentAt !== undefined && performance.now() - entry.sentAt >= entry.runMs;
    entry.reject(overran ? sqlTimedOut(entry.limitMs) : sqlSandboxExited(why, detail));
    this.pump();
  }

  private finish(entry: Pending): void {
    clearTimeout(entry.timer);
    entry.timer = undefined;
    entry.slotRequest?.cancel();
    entry.slotRequest = undefined;
    if (entry.onAbort) entry.signal?.removeEventListener('abort', entry.onAbort);
    if (this.current === entry) this.current = undefined;
  }

  /** Kills the current child and waits until it is gone (its file locks with it). */
  private async discardChild(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.gone) return;
    child.process.kill('SIGKILL');
    await waitFor(child.exited, EXIT_WAIT_MS);
  }

  private armIdle(): void {
    if (!this.child || this.idleTimer) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (!this.current && this.queue.length === 0) void this.retire();
    }, this.idleMs);
    this.idleTimer.unref();
  }

  /** Lets an idle child leave on its own (closing the channel), killing it if it does not. */
  private async retire(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.gone) return;
    try {
      child.process.disconnect();
    } catch {
      // Already disconnected.
    }
    await waitFor(child.exited, EXIT_WAIT_MS);
    if (!child.gone) {
      child.process.kill('SIGKILL');
      await waitFor(child.exited, EXIT_WAIT_MS);
    }
  }

  /** Agent unload and daemon shutdown: refuses queued calls, stops a running one, ends the child. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    for (const entry of this.queue.splice(0)) {
      this.finish(entry);
      entry.reject(agentUnloading());
    }
    const running = this.current;
    if (running) {
      this.finish(running);
      await this.discardChild();
      running.reject(agentUnloading());
    } else await this.retire();
  }
}

/** A call's own cap (a positive integer, at most `most`), else the sandbox's. */
function callCap(value: number | undefined, fallback: number, most: number): number {
  if (value === undefined || !Number.isFinite(value)) return fallback;
  return Math.min(Math.max(1, Math.floor(value)), most);
}

function waitFor(promise: Promise<void>, ms: number): Promise<void> {
  return waitAtMost(promise, ms, () => undefined);
}
