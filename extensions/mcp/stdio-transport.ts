/**
 * The stdio transport of an MCP server, in place of the SDK's: the child runs in its own process group
 * so `close` kills it and everything it started (an `npx` wrapper's node, a shell's children), its
 * environment is exactly the one given (no inherited variables at all), its stderr feeds the server's
 * bounded log, and a line on stdout that is not JSON-RPC closes the connection at once with a clear
 * error instead of leaving the pending call to time out.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  deserializeMessage,
  type JSONRPCMessage,
  serializeMessage,
  type Transport,
} from '@modelcontextprotocol/client';

export interface StdioLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

/** How long a child gets to exit after SIGTERM before its group is killed. */
const TERM_GRACE_MS = 1_000;
/** The longest stdout line kept while waiting for its end; a longer one is garbage. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

export class ChildStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | undefined;
  /** Stdout read since the last complete line. */
  private pending: Buffer | undefined;
  private exited: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly launch: StdioLaunch,
    private readonly onStderr: (text: string) => void,
  ) {}

  /** The child's pid while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Always null (stderr feeds the log instead). With `pid` it makes the SDK treat this transport as stdio
   * when it negotiates the protocol revision: a server silent on `server/discover` is then an older one,
   * not an outage.
   */
  get stderr(): null {
    return null;
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.launch.command, this.launch.args, {
        env: this.launch.env,
        cwd: this.launch.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        shell: false,
      });
      this.child = child;
      this.exited = new Promise((done) => {
        child.once('close', () => done());
        // A command that cannot start emits no close of its own on every platform.
        child.once('error', () => done());
      });
      child.once('error', (error) => {
        reject(error);
        this.fail(new Error(`the server process failed: ${error.message}`));
      });
      child.once('spawn', () => resolve());
      child.once('exit', (code, signal) => {
        if (!this.closed) this.fail(new Error(`the server process exited (${signal ?? `code ${code}`})`));
      });
      child.stdin!.on('error', () => {});
      child.stdout!.on('data', (chunk: Buffer) => this.read(chunk));
      child.stderr!.setEncoding('utf8');
      child.stderr!.on('data', (text: string) => this.onStderr(text));
    });
  }

  /** Each complete stdout line is one message; the SDK's line reader skips lines that are not JSON, this one fails. */
  private read(chunk: Buffer): void {
    try {
      let buffer = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
      for (let end = buffer.indexOf(10); end !== -1; end = buffer.indexOf(10)) {
        const line = buffer.toString('utf8', 0, end).replace(/\r$/, '');
        buffer = buffer.subarray(end + 1);
        if (line.trim() === '') continue;
        const message = deserializeMessage(line);
        if (this.closed) return;
        this.onmessage?.(message);
      }
      if (buffer.length > MAX_LINE_BYTES) throw new Error(`a line longer than ${MAX_LINE_BYTES} bytes`);
      this.pending = buffer.length > 0 ? buffer : undefined;
    } catch (error) {
      this.pending = undefined;
      this.fail(
        new Error(
          `the server wrote something that is not JSON-RPC on stdout: ${(error as Error).message.slice(0, 200)}`,
        ),
      );
    }
  }

  /** Reports the failure, then closes (the client rejects its pending requests). */
  private fail(error: Error): void {
    if (this.closed) return;
    this.onerror?.(error);
    void this.close();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed) throw new Error('the server is not running');
    // The write callback fires once the line is flushed or the pipe failed (a dead child never drains).
    await new Promise<void>((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) =>
        error ? reject(new Error(`could not write to the server: ${error.message}`)) : resolve(),
      );
    });
  }

  /** Ends stdin, SIGTERMs the group, SIGKILLs it after a grace; resolves once the child is gone. */
  async close(): Promise<void> {
    if (this.closed) return this.exited;
    this.closed = true;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.stdin?.end();
      signalGroup(child, 'SIGTERM');
      const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), TERM_GRACE_MS);
      await this.exited;
      clearTimeout(timer);
    }
    // The group may outlive its leader (a grandchild that ignored SIGTERM): make sure it is gone.
    if (child) signalGroup(child, 'SIGKILL');
    this.pending = undefined;
    this.onclose?.();
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}
