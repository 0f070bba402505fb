/**
 * Summaries of agent files that are not loaded (`ctx.launcher.summarize`, autostart), read on a worker
 * thread (`summary-worker.ts`) instead of the daemon's event loop: opening a file (~20 ms of synchronous
 * libsql), the config schema's one-time compile (~16 ms) and the full garbage collection that releases a
 * closed file's descriptors (agents/handle-release.ts: 25–50 ms on the daemon's heap, 1–2 ms on the
 * worker's) all run there. The reading itself is the kernel's one implementation (agents/inspect-file.ts),
 * imported by the worker.
 *
 * Bounded: one worker, one file at a time (callers queue), each file within {@link SUMMARY_LIMITS}
 * `timeoutMs` (past it the worker is ended and the file fails), the worker's heap capped, and the worker
 * ended after `idleMs` without work and at shutdown ({@link SummaryReader.close}). Agent files are
 * untrusted: a worker that fails or stops while reading one fails that file (`load_failed`, with the
 * reason) and the next file gets a new worker.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { type AgentConfig, AgtError, unavailable } from '@agt/contracts';
import { loadFailed } from '../agents/errors.js';
import type { SummaryReply } from './summary-worker.js';

/** Internal: tests lower them. */
export const SUMMARY_LIMITS = { timeoutMs: 10_000, idleMs: 5_000, maxOldGenerationSizeMb: 96 };

export interface FileSummary {
  config: AgentConfig;
  passwordProtected: boolean;
}

// The built daemon and the test build run JavaScript (the worker is a build entry of its own). The
// sources run through tsx, and Node 20 applies no loader to a worker's entry module (not even one named
// by `--import` in its execArgv): there the worker starts from a line that registers tsx, then imports it.
const fromSources = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(fromSources ? './summary-worker.ts' : './summary-worker.js', import.meta.url);
function newWorker(options: WorkerOptions): Worker {
  if (!fromSources) return new Worker(WORKER_URL, options);
  const boot = `const { register } = await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}); register(); await import(${JSON.stringify(WORKER_URL.href)});`;
  return new Worker(boot, { ...options, eval: true });
}

export class SummaryReader {
  private worker: Worker | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private idleTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private closed = false;

  /** How many workers were started (tests: a crash or timeout starts a new one). */
  started = 0;

  /** The file's validated config and whether it is password-protected; throws as `AgentFile.open` would. */
  read(filePath: string): Promise<FileSummary> {
    const run = this.queue.then(() => this.readOne(filePath));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Ends the worker (daemon shutdown); later reads are refused. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  /** True while a worker thread exists (tests). */
  get running(): boolean {
    return this.worker !== null;
  }

  private start(): Worker {
    const worker = newWorker({
      resourceLimits: { maxOldGenerationSizeMb: SUMMARY_LIMITS.maxOldGenerationSizeMb },
    });
    worker.unref(); // an idle worker never keeps the process alive
    // Failures reach the reader waiting on this worker (listeners below); these keep an 'error' without
    // a waiting reader from being thrown, and forget a worker that ended.
    worker.on('error', () => undefined);
    worker.once('exit', () => {
      if (this.worker === worker) this.worker = null;
    });
    this.worker = worker;
    this.started += 1;
    return worker;
  }

  private readOne(filePath: string): Promise<FileSummary> {
    if (this.closed) return Promise.reject(unavailable('the daemon is shutting down'));
    clearTimeout(this.idleTimer);
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise<FileSummary>((resolve, reject) => {
      const end = (fail: string | null) => {
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        clearTimeout(timer);
        if (fail !== null && this.worker === worker) {
          this.worker = null;
          void worker.terminate();
        }
        this.idle();
      };
      const failed = (why: string) => {
        end(why);
        reject(
          this.closed
            ? unavailable('the daemon is shutting down')
            : loadFailed(filePath, 'corrupt', `reading its summary failed: ${why}`),
        );
      };
      const onMessage = (reply: SummaryReply) => {
        if (reply.id !== id) return;
        end(null);
        if (reply.ok) resolve({ config: reply.config as AgentConfig, passwordProtected: reply.passwordProtected });
        else
          reject(
            reply.error.agt
              ? new AgtError(reply.error.code, reply.error.message, {
                  status: reply.error.status,
                  details: reply.error.details,
                })
              : new Error(reply.error.message),
          );
      };
      const onError = (error: Error) => failed(`the reader thread failed (${error.message})`);
      const onExit = (code: number) => failed(`the reader thread stopped (exit code ${code})`);
      const timer = setTimeout(
        () => failed(`no answer within ${SUMMARY_LIMITS.timeoutMs} ms`),
        SUMMARY_LIMITS.timeoutMs,
      );
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      worker.postMessage({ id, filePath });
    });
  }

  /** Ends the worker once it has had no work for `idleMs` (its memory goes back; the next read starts one). */
  private idle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      const worker = this.worker;
      this.worker = null;
      void worker?.terminate();
    }, SUMMARY_LIMITS.idleMs).unref();
  }
}
