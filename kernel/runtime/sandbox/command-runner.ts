/**
 * The kernel's host command runner: system-scope `command` targets, and the compute extension's `host`
 * tier (`ctx.agents.runHostCommand`). One per daemon (kernel/composition/host-commands.ts).
 *
 * Each command runs `/bin/sh -c` in a bubblewrap sandbox of its own (bwrap-args.ts: own pid, mount,
 * IPC, network and UTS namespaces, a read-only allow-listed file system, private tmpfs `/tmp`,
 * `/var/tmp`, `/dev/shm`, the agent's work folder at `/work`) under rlimits (command-limits.ts). When
 * the daemon runs as root the command also runs as the agent's own uid (sandbox-uids.ts). Whether a
 * sandbox can be made is probed once, by making one. Where none can (no `bwrap`, user namespaces
 * forbidden, ...) commands are refused with `unavailable` unless the agent's effective config (the owner's
 * ceiling applied) allows unsandboxed commands; then they run as the daemon's own user in the work folder,
 * with the same rlimits but the process count. Either way the disk use of the agent's work folder is
 * bounded (work-usage.ts): measured after each command, the next refused while it is over.
 *
 * Always: a minimal environment (PATH, HOME, TMPDIR, LANG, AGT_AGENT_ID, AGT_TRIGGER: nothing of the
 * daemon's), the input on stdin, each output stream cut at 512 KB, and the whole sandbox killed at the
 * time limit or when the agent unloads. The agent's work folder, `<dataDir>/sandbox/work/agent-<id>`
 * (0700, the agent's uid as root), is kept between commands and restarts, like a compute container's
 * work dir; the runner makes no other folder on the host but a probe's, removed at once.
 *
 * The same sandbox also runs long-lived processes for the agent (`spawnProcess`, `ctx.agents.spawnSandboxed`:
 * an MCP server over stdio), with their pipes kept by the caller (sandboxed-process.ts); never unsandboxed,
 * and killed when the agent unloads and at shutdown (kernel/composition/agent-access.ts).
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import {
  cappedOutput,
  type CommandOutcome as CommandResult,
  type CommandRun,
  type SandboxedProcess,
  type SandboxedSpawn,
} from '@agt/contracts';
import { badCommandAgentId, commandsNeedSandbox, processNeedsSandbox, workFolderNotBound } from '../errors.js';
import {
  ARGS_FD,
  killPid,
  onSandboxPid,
  SANDBOX_WORK,
  sandboxCommand,
  type SandboxCommand,
  type SandboxMode,
  type SandboxTools,
} from './bwrap-args.js';
import { DEFAULT_COMMAND_LIMITS, prlimitArgs, type CommandLimits } from './command-limits.js';
import { sandboxMounts, startSandboxed } from './sandboxed-process.js';
import { SandboxUids } from './sandbox-uids.js';
import { WorkUsage } from './work-usage.js';

import { COMMAND_DEFAULT_TIMEOUT_MS } from '../../agents/limit-defaults.js';
export { COMMAND_DEFAULT_TIMEOUT_MS };
const SAFE_PATH = '/usr/local/bin:/usr/bin:/bin';
/** The uid a root daemon's probe runs as (`nobody`): no agent's. */
const PROBE_UID = 65534;
const PROBE_TIMEOUT_MS = 10_000;
/** Agent ids as the agent config allows them (kernel/agents/config-schema.ts). */
const AGENT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

export interface HostCommandRunnerOptions {
  dataDir: string;
  /** The limits that apply now (settings `commandLimits` over the defaults); read at every command. */
  limits?(): CommandLimits;
  /** Paths the daemon keeps private (data directory, agent folders); hidden when under a system folder. */
  privatePaths?(): readonly string[];
  /** Tests: `false` acts as a host where no sandbox can be made. */
  sandbox?: boolean;
  /** Told the probe's result once (the daemon logs it). */
  onProbe?(state: SandboxState): void;
  /**
   * True when the agent loaded under `agentId` holds the key the daemon binds to that id (the registry's
   * known agents): the work folder and uid of an id go only to that key, checked at every command.
   */
  holdsKey?(agentId: string): boolean;
}

export interface CommandCall {
  command: string;
  /** Written to the command's stdin, then closed (a target's event as JSON). */
  stdin: string;
  agentId: string;
  trigger: string;
  timeoutMs?: number;
  /** Aborts the run (agent unload, interrupt): the sandbox is killed at once. */
  signal?: AbortSignal;
  /** The agent's effective `security.allow_unsandboxed_commands`: run without a sandbox when none can be made. */
  allowUnsandboxed?: boolean;
}

export interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** How it ran: `sandboxed` (bubblewrap) or `unsandboxed` (the daemon's user, allowed by config). */
  boundary: 'sandboxed' | 'unsandboxed';
}

/** Whether a sandbox can be made here, and why not. */
export type SandboxState =
  | { available: true; mode: SandboxMode; fallback?: string }
  | { available: false; reason: string };

/** The first executable `name` on the safe PATH. */
function findTool(name: string): string | undefined {
  for (const dir of SAFE_PATH.split(':')) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // Not here.
    }
  }
  return undefined;
}

export class HostCommandRunner {
  readonly root: string;
  private readonly uids: SandboxUids;
  private readonly usage = new WorkUsage(() => this.limits().workBytes);
  private state?: Promise<SandboxState>;
  private tools?: SandboxTools;
  /** Long-lived sandboxed processes by agent id, until each has exited. */
  private readonly live = new Map<string, Set<SandboxedProcess>>();

  constructor(private readonly options: HostCommandRunnerOptions) {
    this.root = join(options.dataDir, 'sandbox');
    this.uids = new SandboxUids(join(this.root, 'uids.json'));
  }

  private limits(): CommandLimits {
    return this.options.limits?.() ?? DEFAULT_COMMAND_LIMITS;
  }

  /** Host path of the agent's work folder (`/work` inside its sandbox). */
  workFolder(agentId: string): string {
    if (!AGENT_ID.test(agentId)) throw badCommandAgentId(agentId);
    return join(this.root, 'work', `agent-${agentId}`);
  }

  /**
   * The agent's work folder, made (0700) when missing, for a process of the owner's that works in it
   * beside the agent's commands (an MCP server given it as its root); refused as for a command when the
   * loaded agent does not hold the id's key.
   */
  async prepareWorkFolder(agentId: string): Promise<string> {
    const folder = this.workFolder(agentId);
    if (this.options.holdsKey && !this.options.holdsKey(agentId)) throw workFolderNotBound(agentId);
    await mkdir(folder, { recursive: true, mode: 0o700 });
    return folder;
  }

  /** Probed once per runner, by running `exit 0` in a real sandbox. */
  probe(): Promise<SandboxState> {
    this.state ??= this.makeProbe().then(
      (state) => {
        this.options.onProbe?.(state);
        return state;
      },
      (error: unknown) => {
        // The host failed us (a full disk, say), not the sandbox: the next command probes again.
        this.state = undefined;
        throw error;
      },
    );
    return this.state;
  }

  private async makeProbe(): Promise<SandboxState> {
    if (this.options.sandbox === false) return { available: false, reason: 'disabled for this runner' };
    const root = process.getuid?.() === 0;
    const tools = { bwrap: findTool('bwrap'), prlimit: findTool('prlimit'), setpriv: findTool('setpriv') };
    if (!tools.bwrap)
      return { available: false, reason: 'bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)' };
    if (!tools.prlimit) return { available: false, reason: 'util-linux prlimit is not installed' };
    if (root && !tools.setpriv) return { available: false, reason: 'util-linux setpriv is not installed' };
    this.tools = tools as SandboxTools;
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    const folder = await mkdtemp(join(this.root, 'probe-'));
    try {
      if (root) await chown(folder, PROBE_UID, PROBE_UID);
      const attempt = async (mode: SandboxMode) => {
        const sandbox = sandboxCommand({
          tools: this.tools!,
          mode,
          uid: PROBE_UID,
          workFolder: folder,
          limits: this.limits(),
          privatePaths: [],
          command: 'exit 0',
        });
        const outcome = await this.spawn(sandbox, {}, '/', '', PROBE_TIMEOUT_MS);
        if (outcome.exitCode === 0) return undefined;
        const said = outcome.stderr.trim().split('\n').slice(-2).join(' ');
        return `bwrap could not make a sandbox here (${said || (outcome.timedOut ? 'timed out' : `exit ${outcome.exitCode ?? outcome.signal}`)})`;
      };
      if (!root) {
        const failed = await attempt('user');
        return failed === undefined ? { available: true, mode: 'user' } : { available: false, reason: failed };
      }
      // As root: the agent's uid in a user namespace refusing nested ones where the kernel lets an
      // ordinary uid make one; else the root sandbox without it (nested user namespaces then possible).
      const nested = await attempt('root-userns');
      if (nested === undefined) return { available: true, mode: 'root-userns' };
      const failed = await attempt('root');
      if (failed !== undefined) return { available: false, reason: failed };
      return {
        available: true,
        mode: 'root',
        fallback: `no user namespace for the agent's uid, so nested user namespaces are not refused: ${nested}`,
      };
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  }

  /**
   * Runs a command in the agent's sandbox; `unavailable` when none can be made and the agent may not run unsandboxed.
   */
  async run(call: CommandCall): Promise<CommandOutcome> {
    const folder = this.workFolder(call.agentId);
    if (this.options.holdsKey && !this.options.holdsKey(call.agentId)) throw workFolderNotBound(call.agentId);
    const state = await this.probe();
    if (!state.available && !call.allowUnsandboxed) throw commandsNeedSandbox(state.reason);
    await mkdir(folder, { recursive: true, mode: 0o700 });
    await this.usage.admit(folder);
    try {
      return await this.runAdmitted(call, folder, state);
    } finally {
      this.usage.release(folder);
    }
  }

  private async runAdmitted(call: CommandCall, folder: string, state: SandboxState): Promise<CommandOutcome> {
    const timeoutMs = call.timeoutMs ?? COMMAND_DEFAULT_TIMEOUT_MS;
    const base = { PATH: SAFE_PATH, LANG: 'C.UTF-8', AGT_AGENT_ID: call.agentId, AGT_TRIGGER: call.trigger };
    if (!state.available) {
      // The owner's choice: the daemon's user, its file and network access; the rlimits still hold.
      const prlimit = findTool('prlimit');
      const argv = [
        ...(prlimit ? [prlimit, ...prlimitArgs(this.limits(), false), '--'] : []),
        '/bin/sh',
        '-c',
        call.command,
      ];
      const env = { ...base, HOME: folder, TMPDIR: folder };
      return {
        ...(await this.spawn({ argv }, env, folder, call.stdin, timeoutMs, call.signal)),
        boundary: 'unsandboxed',
      };
    }
    const sandbox = await this.sandboxFor(call.agentId, folder, state.mode, call.command);
    const env = { ...base, HOME: SANDBOX_WORK, TMPDIR: '/tmp' };
    return { ...(await this.spawn(sandbox, env, '/', call.stdin, timeoutMs, call.signal)), boundary: 'sandboxed' };
  }

  private privatePaths(): string[] {
    return [this.options.dataDir, ...(this.options.privatePaths?.() ?? [])];
  }

  /** The agent's sandbox for `command`: its folder owned by its uid (root modes) and 0700, the limits of now. */
  private async sandboxFor(
    agentId: string,
    folder: string,
    mode: SandboxMode,
    command: string | readonly string[],
    mounts?: ReadonlyArray<{ source: string; target: string }>,
  ): Promise<SandboxCommand> {
    const uid = mode !== 'user' ? await this.uids.uidOf(agentId) : undefined;
    if (uid !== undefined) await chown(folder, uid, uid);
    // Kept 0700 whatever happened to it in between: only the agent (and root) may enter.
    await chmod(folder, 0o700);
    return sandboxCommand({
      tools: this.tools!,
      mode,
      uid,
      workFolder: folder,
      limits: this.limits(),
      privatePaths: this.privatePaths(),
      command,
      ...(mounts ? { mounts } : {}),
    });
  }

  /**
   * Starts a long-lived process in the agent's sandbox (`ctx.agents.spawnSandboxed`): refused with `unavailable`
   * where none can be made, whatever the agent's config (it is never run unsandboxed). Killed by
   * {@link killAgent} and {@link killAll}; what it wrote is measured once it ended.
   */
  async spawnProcess(agentId: string, spec: SandboxedSpawn): Promise<SandboxedProcess> {
    const folder = this.workFolder(agentId);
    if (this.options.holdsKey && !this.options.holdsKey(agentId)) throw workFolderNotBound(agentId);
    const mounts = sandboxMounts(spec.mounts, this.privatePaths(), this.root);
    const state = await this.probe();
    if (!state.available) throw processNeedsSandbox(state.reason);
    await mkdir(folder, { recursive: true, mode: 0o700 });
    await this.usage.check(folder);
    const sandbox = await this.sandboxFor(agentId, folder, state.mode, [spec.command, ...(spec.args ?? [])], mounts);
    const env = {
      PATH: SAFE_PATH,
      LANG: 'C.UTF-8',
      HOME: SANDBOX_WORK,
      TMPDIR: '/tmp',
      ...spec.env,
      AGT_AGENT_ID: agentId,
    };
    const started = await startSandboxed(sandbox, env);
    let live = this.live.get(agentId);
    if (!live) this.live.set(agentId, (live = new Set()));
    live.add(started);
    void started.exited.then(() => {
      live.delete(started);
      if (live.size === 0 && this.live.get(agentId) === live) this.live.delete(agentId);
      this.usage.changed(folder);
    });
    return started;
  }

  /** Kills the agent's long-lived sandboxed processes (it unloaded); resolves once they are gone. */
  async killAgent(agentId: string): Promise<void> {
    const live = [...(this.live.get(agentId) ?? [])];
    for (const child of live) child.kill();
    await Promise.all(live.map((child) => child.exited));
  }

  /** Kills every long-lived sandboxed process (shutdown); resolves once they are gone. */
  async killAll(): Promise<void> {
    await Promise.all([...this.live.keys()].map((agentId) => this.killAgent(agentId)));
  }

  /**
   * A command of the `host` tier in the shape extensions see (`contracts/points.ts`): exit code 124 on a
   * time-out, as the compute extension's containers answer it.
   */
  async runHost(run: CommandRun, allowUnsandboxed: boolean, trigger = 'compute_exec'): Promise<CommandResult> {
    const outcome = await this.run({
      command: run.command,
      stdin: run.stdin ?? '',
      agentId: run.agentId,
      trigger,
      timeoutMs: run.timeoutMs,
      signal: run.signal,
      allowUnsandboxed,
    });
    return {
      target: 'host',
      exitCode: outcome.timedOut ? 124 : outcome.exitCode,
      timedOut: outcome.timedOut,
      stdout: outcome.stdout,
      stderr: outcome.stderr,
    };
  }

  /**
   * Spawns `argv` in a process group of its own. At the limit or on abort: in a sandbox, its pid 1 is
   * killed (bwrap reports it on INFO_FD) and the run ends once the kernel has killed and reaped every
   * process of the namespace (bwrap exits, the pipes close); without one, the group is killed and the
   * pipes are let go (a `setsid` child of an unsandboxed command may hold them). A sandbox's bwrap
   * options go on ARGS_FD, so they are in no process's argv.
   */
  private spawn(
    { argv, options }: { argv: string[]; options?: SandboxCommand['options'] },
    env: NodeJS.ProcessEnv,
    cwd: string,
    stdin: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<Omit<CommandOutcome, 'boundary'>> {
    const sandboxed = options !== undefined;
    return new Promise((resolve, reject) => {
      const child = spawn(argv[0]!, argv.slice(1), {
        cwd,
        detached: true,
        stdio: sandboxed ? ['pipe', 'pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe'],
        env,
      });
      if (sandboxed) {
        const args = child.stdio[ARGS_FD] as Writable | null;
        args?.on('error', () => {}); // a bwrap that failed early closes it unread; its exit says why
        args?.end(`${options.join('\0')}\0`);
      }
      // Each stream cut at 512 KB (COMMAND_OUTPUT_CAP_BYTES), as compute's containers cut it.
      const stdout = cappedOutput('\n[output truncated]');
      const stderr = cappedOutput('\n[output truncated]');
      let timedOut = false;
      let exited = false;
      let initPid: number | undefined;
      let ending = false;
      onSandboxPid(child, (pid) => {
        initPid = pid;
        // Reported after the limit struck (same turn of the event loop): aim at it now.
        if (ending && !exited) killPid(pid);
      });
      const killGroup = () => child.pid !== undefined && killPid(-child.pid);
      const end = () => {
        ending = true;
        stdout.freeze();
        stderr.freeze();
        if (!sandboxed) {
          killGroup();
          child.stdout!.destroy();
          child.stderr!.destroy();
          return;
        }
        // Once bwrap has exited the namespace is gone already (and its pid 1 may be reused).
        if (exited) return;
        if (initPid !== undefined) return killPid(initPid);
        // Not reported yet (bwrap still setting up): bwrap's group; its children follow (--die-with-parent).
        killGroup();
      };
      const timer = setTimeout(() => {
        timedOut = true;
        end();
      }, timeoutMs);
      const onAbort = () => end();
      if (signal?.aborted) end();
      else signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout!.on('data', stdout.push);
      child.stderr!.on('data', stderr.push);
      child.stdin!.on('error', () => {}); // a command that never reads stdin closes the pipe early
      child.stdin!.end(stdin);
      child.once('exit', () => {
        exited = true;
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      });
      child.once('close', (exitCode, exitSignal) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        killGroup();
        resolve({ exitCode, signal: exitSignal, timedOut, stdout: stdout.value(), stderr: stderr.value() });
      });
    });
  }
}

/** The agent's effective `security.allow_unsandboxed_commands` (its config under the owner's ceiling). */
export function allowsUnsandboxedCommands(config: { security?: unknown }): boolean {
  return (config.security as Record<string, unknown> | undefined)?.allow_unsandboxed_commands === true;
}
