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
import { transform } from 'esbuild';
import { AgtError } from '../../../contracts/errors.js';

export const LAMBDA_DEFAULT_TIMEOUT_MS = 5_000;
export const LAMBDA_MEMORY_BYTES = 32 * 1024 * 1024;
export const LAMBDA_MAX_RESULT_BYTES = 64 * 1024;
/** How long after its own time limit a silent worker is terminated (the backstop). */
const WATCHDOG_GRACE_MS = 2_000;

export interface LambdaRef {
  path: string;
  fn: string;
}

/** `path/file.ts:functionName` → parts; a malformed reference is a `bad_request`. */
export function parseLambdaRef(ref: string): LambdaRef {
  const match = /^([^:]+):([A-Za-z_$][A-Za-z0-9_$]*)$/.exec(ref);
  if (!match) throw new AgtError('bad_request', `lambda must look like path/file.ts:functionName, got ${JSON.stringify(ref)}`);
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
    try {
      const loader = /\.m?ts$|\.tsx$/.test(path) ? 'ts' : 'js';
      code = (await transform(source, { loader, format: 'cjs', target: 'es2020', sourcefile: path })).code;
    } catch (error) {
      throw new AgtError('bad_request', `lambda ${path} does not compile: ${(error as Error).message.split('\n')[0]}`);
    }
    if (transpiled.size > 200) transpiled.clear();
    transpiled.set(codeId, code);
  }
  return { code, codeId };
}

interface Pending {
  resolve(value: LambdaOutcome): void;
  reject(error: unknown): void;
  watchdog: NodeJS.Timeout;
}

/** One agent's lambda host: a lazily started worker; `close()` on unload ends it and its warm contexts. */
export class LambdaHost {
  private worker: Worker | undefined;
  private ready: Promise<void> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  async run(call: LambdaCall): Promise<LambdaOutcome> {
    if (this.closed) throw new AgtError('unavailable', 'the agent is unloading');
    const { code, codeId } = await toScript(call.ref.path, call.source);
    const timeoutMs = call.timeoutMs ?? LAMBDA_DEFAULT_TIMEOUT_MS;
    const worker = await this.start();
    const id = this.nextId++;
    return new Promise<LambdaOutcome>((resolve, reject) => {
      // The backstop: QuickJS's own interrupt normally answers first. A worker that stays silent is
      // killed along with every call queued on it; the next call starts a new one.
      const watchdog = setTimeout(() => this.kill(new AgtError('timeout', 'lambda exceeded its time limit and its sandbox was terminated')), timeoutMs + WATCHDOG_GRACE_MS);
      watchdog.unref();
      this.pending.set(id, { resolve, reject, watchdog });
      worker.postMessage({
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
      });
    });
  }

  private start(): Promise<Worker> {
    if (this.worker && this.ready) return this.ready.then(() => this.worker!);
    const worker = new Worker(new URL('./quickjs-worker.mjs', import.meta.url), {
      // No tsx loader, no inherited flags, no env: the worker needs only quickjs-emscripten.
      execArgv: [],
      env: {},
      resourceLimits: { maxOldGenerationSizeMb: 96 },
    });
    worker.unref();
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
    });
    worker.on('message', (message: { id?: number; ok?: boolean; resultJson?: string; logs?: string[]; code?: string; message?: string }) => {
      if (message.id === undefined) return;
      const entry = this.pending.get(message.id);
      if (!entry) return;
      this.pending.delete(message.id);
      clearTimeout(entry.watchdog);
      if (message.ok) {
        entry.resolve({ result: JSON.parse(message.resultJson ?? 'null'), logs: message.logs ?? [] });
      } else {
        const code = message.code ?? 'lambda_failed';
        entry.reject(new AgtError(code, message.message ?? 'lambda failed', { status: code === 'lambda_failed' ? 500 : undefined, details: { logs: message.logs ?? [] } }));
      }
    });
    worker.on('error', (error) => this.kill(new AgtError('internal_error', `lambda sandbox failed: ${error.message}`)));
    worker.on('exit', () => {
      if (this.worker === worker) this.kill(new AgtError('internal_error', 'lambda sandbox exited'));
    });
    return this.ready.then(() => worker);
  }

  /** Terminates the worker and fails every call still waiting on it. */
  private kill(reason: AgtError): void {
    const worker = this.worker;
    this.worker = undefined;
    this.ready = undefined;
    for (const [id, entry] of this.pending) {
      clearTimeout(entry.watchdog);
      entry.reject(reason);
      this.pending.delete(id);
    }
    if (worker) void worker.terminate();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.kill(new AgtError('unavailable', 'the agent is unloading'));
  }
}
