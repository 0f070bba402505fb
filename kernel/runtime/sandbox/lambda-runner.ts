/**
 * System-scope lambdas: `path/file.ts:functionName` from the agent's stored files, run in QuickJS
 * (WebAssembly) inside one worker thread per agent.
 *
 * The boundary: the lambda sees only what QuickJS gives it (ECMAScript built-ins, `console.*`, the event
 * as JSON). There is no `require`/`import`, no timers, no fs, network, env or process, and no object of
 * the daemon: the event goes in as a JSON string and the result comes out as one. Each call has a time
 * limit (QuickJS interrupt handler) and a memory limit (QuickJS allocator); a lambda that ignores both is
 * cut off by terminating its worker. A fresh QuickJS runtime is made per call unless `warm` is set, then
 * one context per lambda is kept (module state survives between calls) until the agent unloads.
 */
import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import {
  agentUnloading,
  invalidLambdaRef,
  lambdaDoesNotCompile,
  lambdaFailed,
  lambdaSandboxCrashed,
  lambdaSandboxReplaced,
  lambdaTimedOut,
} from '../errors.js';

import { LAMBDA_DEFAULT_TIMEOUT_MS } from '../../agents/limit-defaults.js';
export { LAMBDA_DEFAULT_TIMEOUT_MS };
export const LAMBDA_MEMORY_BYTES = 32 * 1024 * 1024;
export const LAMBDA_MAX_RESULT_BYTES = 64 * 1024;
/** How long after its own time limit a silent worker is terminated (the backstop). */
const WATCHDOG_GRACE_MS = 2_000;

/**
 * esbuild (the lambdas' TypeScript transpiler) is imported on the first lambda, not at start: loading it
 * cost ~50 ms and ~13 MB of RSS in every daemon, most of which never runs a lambda.
 */
let esbuild: Promise<typeof import('esbuild')> | undefined;
function loadEsbuild(): Promise<typeof import('esbuild')> {
  esbuild ??= import('esbuild').catch((error: unknown) => {
    esbuild = undefined;
    throw error;
  });
  return esbuild;
}

export interface LambdaRef {
  path: string;
  fn: string;
}

/** `path/file.ts:functionName` → parts; a malformed reference is a `bad_request`. */
export function parseLambdaRef(ref: string): LambdaRef {
  const match = /^([^:]+):([A-Za-z_$][A-Za-z0-9_$]*)$/.exec(ref);
  if (!match) throw invalidLambdaRef(ref);
  return { path: match[1]!.replace(/^\/+/, ''), fn: match[2]! };
}

export interface LambdaCall {
  ref: LambdaRef;
  /** The file's text as stored in the agent file. */
  source: string;
  event: unknown;
  warm?: boolean;
  timeoutMs?: number;
  memoryBytes?: number;
}

export interface LambdaOutcome {
  result: unknown;
  logs: string[];
}

const transpiled = new Map<string, string>();

/** TypeScript (or JavaScript) → CommonJS text that the QuickJS wrapper evaluates; cached by content hash. */
async function toScript(path: string, source: string): Promise<{ code: string; codeId: string }> {
  const codeId = createHash('sha256').update(path).update('\0').update(source).digest('hex');
  let code = transpiled.get(codeId);
  if (code === undefined) {
    const { transform } = await loadEsbuild();
    try {
      const loader = /\.m?ts$|\.tsx$/.test(path) ? 'ts' : 'js';
      code = (await transform(source, { loader, format: 'cjs', target: 'es2020', sourcefile: path })).code;
    } catch (error) {
      throw lambdaDoesNotCompile(path, (error as Error).message.split('\n')[0]);
    }
    if (transpiled.size > 200) transpiled.clear();
    transpiled.set(codeId, code);
  }
  return { code, codeId };
}

interface Pending {
  id: number;
  message: Record<string, unknown>;
  timeoutMs: number;
  resolve(value: LambdaOutcome): void;
  reject(error: unknown): void;
  /** Armed when the worker reports that the call started executing. */
  watchdog?: NodeJS.Timeout;
  /** Times the call was handed to a worker (a recycled worker gets the calls that had not run yet). */
  attempts: number;
}

export interface LambdaHostOptions {
  /** The worker script (tests substitute one that wraps the real worker). */
  workerUrl?: URL;
  /** How long after its own time limit a silent call's worker is terminated (default 2 s). */
  watchdogGraceMs?: number;
}

/** A call handed to this many workers in a row without finishing fails instead of going round again. */
const MAX_ATTEMPTS = 3;

/**
 * One agent's lambda host: a lazily started worker; `close()` on unload ends it and its warm contexts.
 *
 * Calls queue in the worker and run one at a time. Each call's time limit starts when the worker
 * starts running it (not while it waits behind others): QuickJS's interrupt handler stops it there,
 * and a main-thread watchdog armed at the same moment (limit plus a grace) is the backstop for a call
 * that does not yield. The watchdog fails only that call: the worker is terminated and replaced, and
 * the calls queued behind it are handed to the new worker (warm contexts are lost with the old one).
 */
export class LambdaHost {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  private readonly workerUrl: URL;
  private readonly graceMs: number;

  constructor(options: LambdaHostOptions = {}) {
    this.workerUrl = options.workerUrl ?? new URL('./quickjs-worker.mjs', import.meta.url);
    this.graceMs = options.watchdogGraceMs ?? WATCHDOG_GRACE_MS;
  }

  async run(call: LambdaCall): Promise<LambdaOutcome> {
    if (this.closed) throw agentUnloading();
    const { code, codeId } = await toScript(call.ref.path, call.source);
    if (this.closed) throw agentUnloading();
    const timeoutMs = call.timeoutMs ?? LAMBDA_DEFAULT_TIMEOUT_MS;
    const id = this.nextId++;
    const message = {
      op: 'run',
      id,
      key: `${call.ref.path}:${call.ref.fn}`,
      warm: call.warm === true,
      code,
      codeId,
      file: call.ref.path,
      fn: call.ref.fn,
      eventJson: JSON.stringify(call.event ?? null),
      timeoutMs,
      memoryBytes: call.memoryBytes ?? LAMBDA_MEMORY_BYTES,
      maxResultBytes: LAMBDA_MAX_RESULT_BYTES,
    };
    return new Promise<LambdaOutcome>((resolve, reject) => {
      const entry: Pending = { id, message, timeoutMs, resolve, reject, attempts: 0 };
      this.pending.set(id, entry);
      this.post(entry);
    });
  }

  private post(entry: Pending): void {
    entry.attempts++;
    this.ensureWorker().postMessage(entry.message);
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.workerUrl, {
      // No tsx loader, no inherited flags, no env: the worker needs only quickjs-emscripten.
      execArgv: [],
      env: {},
      resourceLimits: { maxOldGenerationSizeMb: 96 },
    });
    worker.unref();
    this.worker = worker;
    worker.on(
      'message',
      (message: {
        id?: number;
        started?: boolean;
        ok?: boolean;
        resultJson?: string;
        logs?: string[];
        code?: string;
        message?: string;
      }) => {
        if (message.id === undefined) return;
        const entry = this.pending.get(message.id);
        if (!entry) return;
        if (message.started) {
          // The call runs now: its deadline starts here, not while it waited in the queue.
          entry.watchdog = setTimeout(() => this.overran(entry), entry.timeoutMs + this.graceMs);
          entry.watchdog.unref();
          return;
        }
        this.settle(entry);
        if (message.ok) {
          entry.resolve({ result: JSON.parse(message.resultJson ?? 'null'), logs: message.logs ?? [] });
        } else {
          const code = message.code ?? 'lambda_failed';
          entry.reject(lambdaFailed(code, message.message, message.logs ?? []));
        }
      },
    );
    worker.on('error', (error) => this.crashed(worker, `lambda sandbox failed: ${error.message}`));
    worker.on('exit', () => this.crashed(worker, 'lambda sandbox exited'));
    return worker;
  }

  private settle(entry: Pending): void {
    clearTimeout(entry.watchdog);
    entry.watchdog = undefined;
    this.pending.delete(entry.id);
  }

  /** The running call did not yield within its limit plus the grace: it alone fails. */
  private overran(entry: Pending): void {
    if (!this.pending.has(entry.id)) return;
    this.settle(entry);
    entry.reject(lambdaTimedOut());
    this.recycle();
  }

  /** The worker died on its own: the call it was running fails; the others go to a new worker. */
  private crashed(worker: Worker, why: string): void {
    if (this.worker !== worker) return; // terminated by us: already handled
    const running = [...this.pending.values()].filter((entry) => entry.watchdog !== undefined);
    const culprits = running.length > 0 ? running : [...this.pending.values()]; // died before running anything: fail all
    for (const entry of culprits) {
      this.settle(entry);
      entry.reject(lambdaSandboxCrashed(why));
    }
    this.recycle();
  }

  /** Terminates the current worker and hands every unfinished call to a fresh one. */
  private recycle(): void {
    const old = this.worker;
    this.worker = undefined;
    if (old) void old.terminate();
    if (this.closed) return;
    for (const entry of [...this.pending.values()]) {
      clearTimeout(entry.watchdog);
      entry.watchdog = undefined;
      if (entry.attempts >= MAX_ATTEMPTS) {
        this.pending.delete(entry.id);
        entry.reject(lambdaSandboxReplaced(entry.attempts));
      } else this.post(entry);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    for (const entry of [...this.pending.values()]) {
      this.settle(entry);
      entry.reject(agentUnloading());
    }
    if (worker) await worker.terminate();
  }
}
