import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { agentConfig } from '../test/helpers/agent-file.js';
import { startFakeOpenAI } from '../test/fakes/openai.js';
import { reply } from '../test/fakes/script.js';
import { call, percentile, runThenClean, startBuiltDaemon } from './http.js';

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
  options: { messages?: number; runs?: number; nodeArgs?: string[]; windowsFile?: string } = {},
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
  const { port, exited } = await startBuiltDaemon(ROOT, join(ROOT, 'dist'), dataDir, cleanups, options.nodeArgs);
  const samples: number[] = [];
  const loads: number[] = [];
  /** Each run's load request → answer on the monotonic clock (µs), the clock of a `--cpu-prof` profile. */
  const windows: Array<[bigint, bigint]> = [];
  for (let run = 0; run < runs; run++) {
    const since = performance.now();
    const fromUs = process.hrtime.bigint() / 1000n;
    const loaded = await call(port, 'POST', '/agents/load', { filePath: path });
    loads.push(performance.now() - since);
    if (loaded.status !== 200) throw new Error(`agents/load answered ${loaded.status}: ${JSON.stringify(loaded.body)}`);
    const answered = await call(port, 'POST', `/agents/${loaded.body.id}/chat?wait=true`, { text: `hello ${run}` });
    samples.push(performance.now() - since);
    windows.push([fromUs, process.hrtime.bigint() / 1000n]);
    if (answered.status !== 200) throw new Error(`chat answered ${answered.status}: ${JSON.stringify(answered.body)}`);
    const unloaded = await call(port, 'POST', `/agents/${loaded.body.id}/unload`, {});
    if (unloaded.status !== 200) throw new Error(`unload answered ${unloaded.status}`);
  }
  const fileMB = statSync(path).size / 1024 / 1024;
  // A graceful stop, so a `--cpu-prof` profile is written.
  await call(port, 'POST', '/daemon/shutdown', {});
  await exited;
  if (options.windowsFile) writeFileSync(options.windowsFile, JSON.stringify(windows.map((w) => w.map(Number))));
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
        // Each run's window (load request → answer, monotonic µs) for `bench/profile-top.mjs --windows=`.
        windowsFile: arg('profile-dir') ? join(arg('profile-dir')!, 'windows.json') : undefined,
      },
      cleanups,
    );
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  }, cleanups);
}
