/**
 * Opening a large agent file: a file holding 10,000 chat messages (5,000 user / assistant pairs in `main`)
 * is loaded by the built daemon (`POST /agents/load`) and chatted with (`POST /agents/{id}/chat?wait=true`
 * against an instant fake model); the figure is the time from the load request to the chat's answer,
 * median of 7 (the agent unloaded between them, so each is a first open). The file is written by the
 * kernel's own AgentFile (through tsx), so it is an agent file as the daemon writes them.
 *
 * Alone: `node --import tsx --conditions=agt-source bench/open-large.ts [--messages=10000] [--runs=7]
 * [--profile-dir=<dir>]` (the daemon profiled with `--cpu-prof`);
 * `npm run bench` runs it as a row.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { agentConfig } from '../test/helpers/agent-file.js';
import { startFakeOpenAI } from '../test/fakes/openai.js';
import { reply } from '../test/fakes/script.js';
import { call, freePort, percentile, runThenClean, TOKEN } from './http.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export interface OpenLargeFigures {
  messages: number;
  fileMB: number;
  /** Load request → the first chat's answer, per run (ms). */
  samples: number[];
  medianMs: number;
  /** The load request alone, median (ms). */
  loadMedianMs: number;
}

/** Writes an agent file of `messages` chat rows in `dir`; returns its path. */
function writeLargeFile(dir: string, messages: number): string {
  const path = join(dir, 'large.agt');
  const file = AgentFile.create(path, agentConfig({ name: 'large', model: { provider: 'fake', model_id: 'm' } }));
  file.transaction(() => {
    for (let i = 0; i < messages; i++) {
      const user = i % 2 === 0;
      file.loop.append({
        role: user ? 'user' : 'assistant',
        kind: 'message',
        content: { text: `${user ? 'question' : 'answer'} ${i}: ${'lorem ipsum dolor sit amet '.repeat(4)}` },
        turnId: `turn-${Math.floor(i / 2)}`,
      });
    }
  });
  file.finishCreation();
  void file.close();
  return path;
}

export async function openLargeBench(
  options: { messages?: number; runs?: number; nodeArgs?: string[] } = {},
  cleanups: Array<() => unknown> = [],
): Promise<OpenLargeFigures> {
  const messages = options.messages ?? 10_000;
  const runs = options.runs ?? 7;
  const dataDir = mkdtempSync(join(tmpdir(), 'agt-open-large-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const path = writeLargeFile(dataDir, messages);
  await sleep(100);
  const fake = await startFakeOpenAI({ teardown: (fn) => void cleanups.push(fn) }, [], { fallback: reply.text('ok') });
  writeFileSync(
    join(dataDir, 'settings.json'),
    JSON.stringify({
      providers: [{ id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'm' }],
    }),
  );
  const build = JSON.parse(readFileSync(join(ROOT, 'dist/.agt-build.json'), 'utf8')) as { main: string };
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      pathToFileURL(join(ROOT, 'bin', 'v8-flags.mjs')).href,
      ...(options.nodeArgs ?? []),
      join(ROOT, 'dist', build.main),
    ],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dataDir,
        AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
        AGT_DAEMON_TOKEN: TOKEN,
        AGT_DAEMON_PORT: String(port),
        MESH_PORT: String(await freePort()),
      },
      stdio: ['ignore', 'ignore', 'ignore'],
    },
  );
  const exited = new Promise((done) => child.once('exit', done));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the daemon exited with ${child.exitCode}`);
    try {
      if ((await call(port, 'GET', '/health', undefined, false)).status === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(20);
  }
  const samples: number[] = [];
  const loads: number[] = [];
  for (let run = 0; run < runs; run++) {
    const since = performance.now();
    const loaded = await call(port, 'POST', '/agents/load', { filePath: path });
    loads.push(performance.now() - since);
    if (loaded.status !== 200) throw new Error(`agents/load answered ${loaded.status}: ${JSON.stringify(loaded.body)}`);
    const answered = await call(port, 'POST', `/agents/${loaded.body.id}/chat?wait=true`, { text: `hello ${run}` });
    samples.push(performance.now() - since);
    if (answered.status !== 200) throw new Error(`chat answered ${answered.status}: ${JSON.stringify(answered.body)}`);
    const unloaded = await call(port, 'POST', `/agents/${loaded.body.id}/unload`, {});
    if (unloaded.status !== 200) throw new Error(`unload answered ${unloaded.status}`);
  }
  const fileMB = statSync(path).size / 1024 / 1024;
  // A graceful stop, so a `--cpu-prof` profile is written.
  await call(port, 'POST', '/daemon/shutdown', {});
  await exited;
  return { messages, fileMB, samples, medianMs: percentile(samples, 50), loadMedianMs: percentile(loads, 50) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const cleanups: Array<() => unknown> = [];
  await runThenClean(async () => {
    const figures = await openLargeBench(
      {
        messages: Number(arg('messages') ?? 10_000),
        runs: Number(arg('runs') ?? 7),
        nodeArgs: arg('profile-dir') ? ['--cpu-prof', `--cpu-prof-dir=${arg('profile-dir')}`] : [],
      },
      cleanups,
    );
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  }, cleanups);
}
