/**
 * Runs `agt args…` in the test's own process (`main(argv)` of the built cli/main.ts in dist/, the code
 * `bin/agt.mjs` runs): stdout and stderr captured,
 * the given environment set for the call only, the exit code read from process.exitCode and reset. A
 * spawned `agt` costs ~0.2 s of CPU (a Node start and the CLI's import); this costs the command alone.
 * One call at a time (the capture is process-wide); a command whose process is the point (exit on a
 * signal, a chat another terminal answers, a fresh environment) still runs as a real `bin/agt.mjs`.
 * `stdin`, when given, is what the command reads from standard input (a secret, a file's bytes).
 */
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type { main as Main, program as Program } from '../../cli/main.js';
import { ROOT } from './daemon.js';

let built: { main: typeof Main; program: typeof Program } | undefined;

/** The built CLI's module (dist/cli/main.js): `main(argv)` and its command tree, `program()`. */
export async function builtCli(): Promise<{ main: typeof Main; program: typeof Program }> {
  built ??= (await import(pathToFileURL(join(ROOT, 'dist/cli/main.js')).href)) as {
    main: typeof Main;
    program: typeof Program;
  };
  return built;
}

export interface CliRun {
  code: number;
  stdout: string;
  /** stdout as bytes (a file `agt files cat` printed). */
  bytes: Buffer;
  stderr: string;
}

let busy = false;

export async function agtInProcess(
  args: string[],
  env: Record<string, string> = {},
  stdin?: Buffer | string,
): Promise<CliRun> {
  if (busy) throw new Error('agtInProcess: one call at a time (stdout is captured process-wide)');
  const { main } = await builtCli();
  busy = true;
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const writeOut = process.stdout.write;
  const writeErr = process.stderr.write;
  const capture = (into: Buffer[]) =>
    ((chunk: string | Uint8Array) => (into.push(Buffer.from(chunk)), true)) as typeof process.stdout.write;
  const envBefore = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const stdinBefore = Object.getOwnPropertyDescriptor(process, 'stdin')!;
  process.stdout.write = capture(out);
  process.stderr.write = capture(err);
  Object.assign(process.env, env);
  if (stdin !== undefined)
    Object.defineProperty(process, 'stdin', { value: Readable.from([Buffer.from(stdin)]), configurable: true });
  try {
    await main(['node', 'agt', ...args]);
  } finally {
    process.stdout.write = writeOut;
    process.stderr.write = writeErr;
    if (stdin !== undefined) Object.defineProperty(process, 'stdin', stdinBefore);
    for (const [k, v] of Object.entries(envBefore)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    busy = false;
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = 0;
  const bytes = Buffer.concat(out);
  return { code, stdout: bytes.toString('utf8'), bytes, stderr: Buffer.concat(err).toString('utf8') };
}
