/**
 * The stdio transport of an MCP server, in place of the SDK's: the child runs in its own process group
 * so `close` kills it and everything it started (an `npx` wrapper's node, a shell's children), its
 * environment is exactly the one given (no inherited variables at all), its stderr feeds the server's
 * bounded log, and a line on stdout that is not JSON-RPC closes the connection at once with a clear
 * error instead of leaving the pending call to time out. A registration's `sandbox` starts the child in the
 * calling agent's command sandbox instead (the kernel's `ctx.agents.spawnSandboxed`), which the kernel kills whole.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { SandboxedProcess, SandboxedSpawn } from '@agt/contracts';
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
  /** Run in the calling agent's command sandbox (`ctx.agents.spawnSandboxed`), with these read-only mounts. */
  sandbox?: { mounts: Record<string, string> };
}

/** How long a child gets to exit after SIGTERM before its group is killed. */
const TERM_GRACE_MS = 1_000;
/** The longest stdout line kept while waiting for its end; a longer one is garbage. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** The server's process, local or sandboxed: what the transport reads, writes and ends. */
interface ServerProcess {
  pid: number | undefined;
  stdin: Writable;
  /** Settles once the process (and, sandboxed, everything it started) is gone. */
  exited: Promise<void>;
  /** Whether it has ended already. */
  ended(): boolean;
  /** Asks it to end (SIGTERM to its group; sandboxed, the end of stdin is the only ask). */
  terminate(): void;
  /** Ends it and everything it started, at once. */
  kill(): void;
}

/** Starts a program in the calling agent's sandbox (`ctx.agents.spawnSandboxed` bound to that agent). */
export type SandboxSpawner = (spawn: SandboxedSpawn) => Promise<SandboxedProcess>;

export class ChildStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ServerProcess | undefined;
  /** Stdout read since the last complete line. */
  private pending: Buffer | undefined;
  private closed = false;

  constructor(
    private readonly launch: StdioLaunch,
    private readonly onStderr: (text: string) => void,
    private readonly spawnSandboxed?: SandboxSpawner,
  ) {}

  /** The child's pid while it runs (sandboxed: the host pid of its sandbox). */
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

  async start(): Promise<void> {
    const child = this.launch.sandbox ? await this.startSandboxed(this.launch.sandbox) : await this.startLocal();
    this.child = child;
    // Closed while it started (a connect that timed out): nothing may be left running.
    if (this.closed) {
      child.kill();
      throw new Error('the transport closed while the server started');
    }
    void child.exited.then(() => {
      if (!this.closed) this.fail(new Error(`the server process exited (${this.exitReason ?? 'ended'})`));
    });
  }

  /** How the process ended, for the failure message. */
  private exitReason: string | undefined;

  private wire(stdout: Readable, stderr: Readable): void {
    stdout.on('data', (chunk: Buffer) => this.read(chunk));
    stderr.setEncoding('utf8');
    stderr.on('data', (text: string) => this.onStderr(text));
  }

  private startSandboxed(sandbox: NonNullable<StdioLaunch['sandbox']>): Promise<ServerProcess> {
    if (!this.spawnSandboxed) throw new Error("this daemon's kernel offers no agent sandbox for the server");
    return this.spawnSandboxed({
      command: this.launch.command,
      args: this.launch.args,
      env: this.launch.env,
      mounts: sandbox.mounts,
    }).then((sandboxed) => {
      let gone = false;
      const exited = sandboxed.exited.then((exit) => {
        gone = true;
        this.exitReason = exit.signal ?? `code ${exit.code}`;
      });
      this.wire(sandboxed.stdout, sandboxed.stderr);
      return {
        pid: sandboxed.pid,
        stdin: sandboxed.stdin,
        exited,
        ended: () => gone,
        terminate: () => {},
        kill: () => sandboxed.kill(),
      };
    });
  }

  private startLocal(): Promise<ServerProcess> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.launch.command, this.launch.args, {
        env: this.launch.env,
        cwd: this.launch.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        shell: false,
      });
      const exited = new Promise<void>((done) => {
        child.once('close', () => done());
        // A command that cannot start emits no close of its own on every platform.
        child.once('error', () => done());
      });
      child.once('error', (error) => {
        reject(error);
        this.fail(new Error(`the server process failed: ${error.message}`));
      });
      child.once('exit', (code, signal) => {
        this.exitReason = signal ?? `code ${code}`;
        if (!this.closed) this.fail(new Error(`the server process exited (${this.exitReason})`));
      });
      child.stdin!.on('error', () => {});
      this.wire(child.stdout!, child.stderr!);
      child.once('spawn', () =>
        resolve({
          pid: child.pid,
          stdin: child.stdin!,
          exited,
          ended: () => child.exitCode !== null || child.signalCode !== null,
          terminate: () => signalGroup(child, 'SIGTERM'),
          // The group may outlive its leader (a grandchild that ignored SIGTERM): make sure it is gone.
          kill: () => signalGroup(child, 'SIGKILL'),
        }),
      );
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

  /** Ends stdin, asks the process to end, kills it after a grace; resolves once it is gone. */
  async close(): Promise<void> {
    const child = this.child;
    if (this.closed) return child?.exited;
    this.closed = true;
    if (child && !child.ended()) {
      child.stdin.end();
      child.terminate();
      const timer = setTimeout(() => child.kill(), TERM_GRACE_MS);
      await child.exited;
      clearTimeout(timer);
    }
    child?.kill();
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
