/**
 * One command in a container: `/bin/sh -c` through the engine's exec API, as the agent's user in its
 * work dir, stdin written and closed, stdout and stderr each cut at 512 KB (the rest is read and
 * dropped, so the command never blocks on a full pipe), a time limit (exit 124) and an abort signal.
 *
 * The engine has no call to kill an exec, so every exec carries a marker in its environment and a
 * second exec, as the same user, kills the processes that carry it (each pass catches what the last
 * one forked). A process that scrubs its own environment escapes that; it still dies with the
 * container, and the container's pid and memory limits bound it meanwhile.
 */
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { cappedOutput, type CommandOutcome } from '@agt/contracts';
import type { Engine } from './engine.js';

export const TIMED_OUT_EXIT = 124;
const MARKER = 'AGT_EXEC';
/** Time the engine gets to report the exit code once the output has ended. */
const EXIT_POLL_MS = 2_000;
/** The most a kill waits for the engine before the exec's stream is dropped anyway. */
const KILL_WAIT_MS = 5_000;

export interface ExecCall {
  container: string;
  command: string;
  stdin?: string;
  user: string;
  workDir: string;
  env: string[];
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Kills every process of the calling user whose environment holds `AGT_EXEC=$1`: first stops them all
 * (a stopped process cannot fork or go on to its next command), twice to catch what forked meanwhile,
 * then kills them.
 */
const KILL_SCRIPT = `marked() {
  for p in /proc/[0-9]*; do
    if tr '\\0' '\\n' < "$p/environ" 2>/dev/null | grep -qxF "${MARKER}=$1"; then echo "\${p#/proc/}"; fi
  done
}
for pass in 1 2; do for pid in $(marked "$1"); do kill -STOP "$pid" 2>/dev/null; done; done
for pid in $(marked "$1"); do kill -KILL "$pid" 2>/dev/null; done`;

/** A stream's first 512 KB, collected through a sink the engine's demultiplexer writes to. */
function capped() {
  const output = cappedOutput('\n[output truncated at 512 KB]');
  const sink = new PassThrough();
  sink.on('data', output.push);
  return { sink, freeze: output.freeze, value: output.value };
}

export async function execInContainer(engine: Engine, call: ExecCall): Promise<CommandOutcome> {
  const marker = randomUUID();
  // Created with the engine time limit; started on the client without one (an idle exec is not a dead engine).
  const created = await engine.call(`exec in ${call.container}`, (docker) =>
    docker.getContainer(call.container).exec({
      Cmd: ['/bin/sh', '-c', call.command],
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      User: call.user,
      WorkingDir: call.workDir,
      Env: [...call.env, `${MARKER}=${marker}`],
    }),
  );
  const { docker, exec, stream } = await engine.call(
    `start an exec in ${call.container}`,
    async (docker) => {
      const exec = docker.getExec(created.id);
      return { docker, exec, stream: await exec.start({ hijack: true, stdin: true }) };
    },
    { stream: true },
  );
  const stdout = capped();
  const stderr = capped();
  docker.modem.demuxStream(stream, stdout.sink, stderr.sink);
  stream.on('error', () => {});
  stream.end(call.stdin ?? '');

  let timedOut = false;
  let killed = false;
  const kill = async () => {
    stdout.freeze();
    stderr.freeze();
    // An engine that does not answer the kill must not hold the call: the stream is dropped regardless.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      killMarked(docker, call, marker),
      new Promise((resolve) => (timer = setTimeout(resolve, KILL_WAIT_MS))),
    ]);
    clearTimeout(timer);
    stream.destroy();
  };
  const ended = new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
  });
  const timer = setTimeout(() => {
    timedOut = true;
    void kill();
  }, call.timeoutMs);
  const onAbort = () => {
    killed = true;
    void kill();
  };
  if (call.signal?.aborted) onAbort();
  else call.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await ended;
  } finally {
    clearTimeout(timer);
    call.signal?.removeEventListener('abort', onAbort);
  }
  stdout.sink.end();
  stderr.sink.end();
  let exitCode: number | null = null;
  if (!timedOut && !killed) exitCode = await exitCodeOf(exec);
  return {
    target: call.container,
    exitCode: timedOut ? TIMED_OUT_EXIT : exitCode,
    timedOut,
    stdout: stdout.value(),
    stderr: stderr.value(),
  };
}

/**
 * Runs {@link KILL_SCRIPT} as the exec's user; resolves when it is done, or failed (the container is gone: so are its
 * processes).
 */
async function killMarked(docker: Docker, call: ExecCall, marker: string): Promise<void> {
  try {
    const killer = await docker.getContainer(call.container).exec({
      Cmd: ['/bin/sh', '-c', KILL_SCRIPT, 'sh', marker],
      User: call.user,
      AttachStdout: true,
      AttachStderr: true,
    });
    const out = await killer.start({ hijack: true, stdin: false });
    await new Promise(
      (resolve) => (out.once('end', resolve), out.once('close', resolve), out.once('error', resolve), out.resume()),
    );
  } catch {
    // Nothing to kill any more.
  }
}

/** The exec's exit code; the engine may report it a moment after the output ends. */
async function exitCodeOf(exec: {
  inspect(): Promise<{ Running: boolean; ExitCode: number | null }>;
}): Promise<number | null> {
  const deadline = Date.now() + EXIT_POLL_MS;
  for (;;) {
    try {
      const info = await exec.inspect();
      if (!info.Running && info.ExitCode !== null) return info.ExitCode;
    } catch {
      return null;
    }
    if (Date.now() > deadline) return null;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
