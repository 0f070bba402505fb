/**
 * Reads agent files the daemon did not write last, in a child process (`file-reader-child.ts`), never on
 * the daemon's own threads:
 * - `summary`: a not-loaded file's config and whether it needs a password (`ctx.launcher.summarize`,
 *   autostart, tracked folders), without the ~20 ms synchronous open, the config schema's compile and the
 *   full garbage collection of a close on the daemon's event loop;
 * - `readWhole`: every stored value of a file, before the daemon opens a file it did not write last
 *   (agents/vetted-files.ts says which): libsql aborts its process on a TEXT value that is not UTF-8, so
 *   such a file must abort this child, not the daemon.
 *
 * Bounded: one child, one file at a time (callers queue), each file within {@link FILE_READER_LIMITS}
 * `timeoutMs` (past it the child is killed and the file fails), the child's heap capped, and the child
 * ended after `idleMs` without work and at shutdown ({@link FileReader.close}). A child that dies or fails
 * while reading a file fails that file (`load_failed`, `corrupt`, with the reason); the next file gets a
 * new child.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type AgentConfig, AgtError, unavailable } from '@agt/contracts';
import { loadFailed } from '../agents/errors.js';
import type { FileReadReply, FileReadRequest } from './file-reader-child.js';

/** Internal: tests lower them. */
export const FILE_READER_LIMITS = { timeoutMs: 30_000, idleMs: 5_000, maxOldGenerationSizeMb: 96 };

export interface FileSummary {
  config: AgentConfig;
  passwordProtected: boolean;
}

// The built daemon runs the child's JavaScript (a build entry of its own); the sources run it through tsx.
const fromSources = import.meta.url.endsWith('.ts');
const CHILD_PATH = fileURLToPath(
  new URL(fromSources ? './file-reader-child.ts' : './file-reader-child.js', import.meta.url),
);
const loaderArgs = () => (fromSources ? ['--import', import.meta.resolve('tsx/esm')] : []);

export class FileReader {
  private child: ChildProcess | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private idleTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private closed = false;

  /** How many children were started (tests: a crash or timeout starts a new one). */
  started = 0;

  /** The file's validated config and whether it is password-protected; throws as `AgentFile.open` would. */
  summary(filePath: string): Promise<FileSummary> {
    return this.enqueue('summary', filePath) as Promise<FileSummary>;
  }

  /** Resolves once every value of the file was read in the child; rejects as `AgentFile.open` would. */
  async readWhole(filePath: string): Promise<void> {
    await this.enqueue('whole', filePath);
  }

  /** Ends the child (daemon shutdown); later reads are refused. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    const child = this.child;
    this.child = null;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  }

  /** True while a child process exists (tests). */
  get running(): boolean {
    return this.child !== null;
  }

  private enqueue(op: FileReadRequest['op'], filePath: string): Promise<FileSummary> {
    const run = this.queue.then(() => this.readOne(op, filePath));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private start(): ChildProcess {
    const child = fork(CHILD_PATH, [], {
      // No inherited flags or environment: the child needs only libsql and the kernel's reading code.
      execArgv: [...loaderArgs(), `--max-old-space-size=${FILE_READER_LIMITS.maxOldGenerationSizeMb}`],
      env: {},
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      serialization: 'json',
    });
    // An idle child never keeps the daemon alive; failures reach the reader waiting on it (below).
    child.unref();
    child.channel?.unref();
    child.on('error', () => undefined);
    child.once('exit', () => {
      if (this.child === child) this.child = null;
    });
    this.child = child;
    this.started += 1;
    return child;
  }

  private readOne(op: FileReadRequest['op'], filePath: string): Promise<FileSummary> {
    if (this.closed) return Promise.reject(unavailable('the daemon is shutting down'));
    clearTimeout(this.idleTimer);
    const child = this.child ?? this.start();
    const id = this.nextId++;
    return new Promise<FileSummary>((resolve, reject) => {
      let settled = false;
      const end = (failed: boolean) => {
        settled = true;
        child.off('message', onMessage).off('exit', onExit);
        clearTimeout(timer);
        if (failed && this.child === child) {
          this.child = null;
          child.kill('SIGKILL');
        }
        this.idle();
      };
      const failed = (why: string) => {
        if (settled) return;
        end(true);
        reject(
          this.closed
            ? unavailable('the daemon is shutting down')
            : loadFailed(filePath, 'corrupt', `reading it failed: ${why}`),
        );
      };
      const onMessage = (reply: FileReadReply) => {
        if (reply.id !== id || settled) return;
        end(false);
        if (reply.ok)
          resolve({ config: reply.config as AgentConfig, passwordProtected: reply.passwordProtected === true });
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
      const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
        failed(`the reader process stopped (${signal ?? `exit code ${code}`})`);
      const timer = setTimeout(
        () => failed(`no answer within ${FILE_READER_LIMITS.timeoutMs} ms`),
        FILE_READER_LIMITS.timeoutMs,
      );
      child.on('message', onMessage).once('exit', onExit);
      child.send({ id, op, filePath } satisfies FileReadRequest, (error) => {
        if (!error) return;
        // A child that died as it started refuses the request before its exit is seen: the exit says why.
        const why = `the reader process did not take the request (${error.message})`;
        setTimeout(() => failed(why), 5000).unref();
      });
    });
  }

  /** Ends the child once it has had no work for `idleMs` (its memory goes back; the next read starts one). */
  private idle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      const child = this.child;
      this.child = null;
      child?.kill('SIGKILL');
    }, FILE_READER_LIMITS.idleMs).unref();
  }
}
