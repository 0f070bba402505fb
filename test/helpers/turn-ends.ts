/**
 * Shared by test/turn-ends.test.ts and bench/turn-ends-soak.ts: real `agtd` processes on one data
 * directory, killed (SIGTERM or SIGKILL) at random moments under a stream of chats and dispatches,
 * restarted, with one SSE client following every lifetime, so that each accepted turnId can be checked
 * to end exactly once on the streams across all of them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { reply, startFakeOpenAI, type RecordedRequest } from '../fakes/openai.js';
import { createAgentFile } from './agent-file.js';
import { prepareEnv, ROOT, tempDir, type BootOptions } from './daemon.js';
import { openSse, type SseStream } from './sse-client.js';

interface Tap {
  teardown(fn: () => unknown): void;
}

export interface Frame {
  cursor: number;
  event: { event_type: string; agent_id: string | null; turn_id?: string; payload: any; seq: number };
}

/** The turn ids an event ends (turn.completed / agent.error with absorbed chats, chat.discarded). */
export function endedBy(event: Frame['event']): string[] {
  const p = event.payload ?? {};
  if (event.event_type === 'turn.completed' || event.event_type === 'agent.error') {
    if (typeof p.turn_id !== 'string') return [];
    return [p.turn_id, ...(Array.isArray(p.absorbed_turn_ids) ? p.absorbed_turn_ids : [])];
  }
  if (event.event_type === 'chat.discarded') return Array.isArray(p.turn_ids) ? p.turn_ids : [];
  return [];
}

/** A small seeded generator (mulberry32): a failing run is repeated with its seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Polls a condition (never a timing assertion): rejects after `ms`. */
export async function until<T>(check: () => T | undefined | false, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`failsafe: ${what} not within ${ms} ms`);
    await sleep(15);
  }
}

export interface Agtd {
  child: ChildProcess;
  url: string;
  token: string;
  out(): string;
  err(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `bin/agtd.mjs` on `dataDir`; `onLine` sees each stdout line as it comes (before the listening line too). */
export function startAgtd(
  t: Tap,
  dataDir: string,
  manifest: unknown,
  env: Record<string, string> = {},
  onLine?: (line: string, child: ChildProcess) => void,
): { child: ChildProcess; ready: Promise<Agtd> } {
  const prepared = prepareEnv(t, {
    dataDir,
    extensions: manifest as BootOptions['extensions'],
    env: { AGT_LOG_LEVEL: 'warn', AGT_LOG_FORMAT: 'json', ...env },
  });
  const child = spawn(process.execPath, [join(ROOT, 'bin/agtd.mjs')], {
    env: prepared.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let pending = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      onLine?.(line, child);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  const ready = new Promise<Agtd>((done, fail) => {
    const check = () => {
      const match = /agt daemon listening on (http:\/\/\S+)/.exec(out);
      if (!match) return;
      child.stdout!.off('data', check);
      const token = readFileSync(join(dataDir, 'daemon-token'), 'utf8').trim();
      done({ child, url: match[1]!, token, out: () => out, err: () => err, exited });
    };
    child.stdout!.on('data', check);
    void exited.then(() => fail(new Error(`agtd exited before listening: ${err.slice(-2000)}`)));
  });
  ready.catch(() => {});
  return { child, ready };
}

export interface KillRunOptions {
  /** How many daemon lifetimes end in a kill (each followed by a restart). */
  kills: number;
  seed: number;
  /** Open accepted turns per agent before the load waits (keeps the backlog bounded). */
  backlog?: number;
}

export interface KillRunResult {
  accepted: Map<string, { agent: string; lifetime: number }>;
  /** Every end frame seen, per turn id, with the lifetime it was seen in. */
  ends: Map<string, Array<{ lifetime: number; event: Frame['event'] }>>;
  signals: NodeJS.Signals[];
  /** SIGTERM lifetimes: turns that started in them and had no end on their stream before it closed. */
  unendedAtSigterm: string[];
  /** `agent.error` `unloaded` frames seen at SIGTERM. */
  unloaded: number;
  /** Turn ids ended by `agent.error` `daemon_restart` (cut short by a SIGKILL). */
  restarted: number;
  lifetimes: number;
  dataDir: string;
  files: string[];
  /** What the last daemon (stopped by SIGTERM after draining, logging at info) wrote to stderr. */
  lastStderr: string;
}

const PROVIDERS = {
  name: 'providers',
  module: join(ROOT, 'extensions/providers/index.ts'),
  enabled: true,
  config: { maxRetries: 0, retryBaseMs: 10, retryMaxMs: 20 },
};

/**
 * The kill run: three agents (two under load, one whose model never answers, so a turn is always
 * mid-call when the signal comes), `kills` lifetimes ended by SIGTERM or SIGKILL at a random moment
 * (after a random number of frames plus a random instant), then a last lifetime that drains the work.
 */
export async function killRun(t: Tap, options: KillRunOptions): Promise<KillRunResult> {
  const rnd = seeded(options.seed);
  const backlog = options.backlog ?? 6;
  const script = (request: RecordedRequest) => {
    const messages = (request.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
    const system = String(messages.find((m) => m.role === 'system')?.content ?? '');
    if (system.includes('staller')) return reply.stall();
    const r = rnd();
    if (messages.at(-1)?.role !== 'tool' && r < 0.25)
      return reply.toolCalls([{ name: 'say', args: { text: 'working on it' } }]);
    return reply.text('fine, all done with that one now', { chunkDelayMs: 2 + Math.floor(rnd() * 6) });
  };
  const fake = await startFakeOpenAI(t, script);
  const dataDir = tempDir(t, 'agt-ends-data-');
  writeFileSync(
    join(dataDir, 'settings.json'),
    JSON.stringify({ providers: [{ id: 'local', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl }] }),
  );
  const agentsDir = tempDir(t, 'agt-ends-agents-');
  const names = ['alpha', 'beta', 'staller'] as const;
  const files: string[] = [];
  for (const name of names)
    files.push(await createAgentFile(agentsDir, { name, instructions: `You are the ${name} agent.` }));

  const accepted = new Map<string, { agent: string; lifetime: number }>();
  const ends = new Map<string, Array<{ lifetime: number; event: Frame['event'] }>>();
  const signals: NodeJS.Signals[] = [];
  const unendedAtSigterm: string[] = [];
  let unloaded = 0;
  let epoch = '';
  let lastCursor = 0;

  for (let lifetime = 0; lifetime <= options.kills; lifetime++) {
    const last = lifetime === options.kills;
    // The last lifetime logs at info: its stop line is checked.
    const d = await startAgtd(t, dataDir, { extensions: [PROVIDERS] }, last ? { AGT_LOG_LEVEL: 'info' } : {}).ready;
    const auth = { authorization: `Bearer ${d.token}` };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(d.url + path, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };
    // The stream of the previous lifetime resumes here: another epoch, so the whole buffer is replayed.
    const stream: SseStream = await openSse(
      `${d.url}/events${epoch ? `?since=${lastCursor}&epoch=${epoch}` : ''}`,
      auth,
    );
    const frames: Frame[] = [];
    let seen = 0;
    const take = () => {
      for (; seen < stream.messages.length; seen++) {
        const message = stream.messages[seen]!;
        if (message.event === 'stream.hello') epoch = JSON.parse(message.data!).epoch;
        if (message.id === undefined || message.data === undefined) continue;
        const frame = JSON.parse(message.data) as Frame;
        lastCursor = frame.cursor;
        frames.push(frame);
        for (const turnId of endedBy(frame.event)) {
          const list = ends.get(turnId) ?? [];
          list.push({ lifetime, event: frame.event });
          ends.set(turnId, list);
        }
      }
      return frames;
    };
    const ids: string[] = [];
    for (const path of files) {
      const loaded = await post('/agents/load', { filePath: path });
      if (loaded.status !== 200) throw new Error(`load failed: ${loaded.status} ${JSON.stringify(loaded.body)}`);
      ids.push(loaded.body.id);
    }
    const open = (agent: string) =>
      [...accepted].filter(([turnId, info]) => info.agent === agent && !ends.has(turnId)).length;
    const send = async (agent: string, kind: 'chat' | 'trigger', n: number) => {
      const res =
        kind === 'chat'
          ? await post(`/agents/${agent}/chat`, { text: `chat ${lifetime}.${n}` })
          : await post(`/agents/${agent}/trigger`, { type: 'inbox', data: { text: `dispatch ${lifetime}.${n}` } });
      if (res.status === 202) accepted.set(res.body.turnId, { agent, lifetime });
      return res.status;
    };

    // The staller is mid-call when the signal comes (in the last lifetime it gets nothing).
    if (!last) await send(ids[2]!, 'chat', 0);
    let loading = !last;
    const load = async (agent: string) => {
      for (let n = 1; loading; n++) {
        take();
        if (open(agent) >= backlog) {
          await sleep(10);
          continue;
        }
        const status = await send(agent, rnd() < 0.7 ? 'chat' : 'trigger', n).catch(() => 0);
        if (status !== 202) return; // the daemon is going away
      }
    };
    const loads = [load(ids[0]!), load(ids[1]!)];

    if (last) {
      // Drain: every accepted turn ends (recovered work runs, cut-short turns are announced).
      await until(
        () => (take(), [...accepted.keys()].every((turnId) => ends.has(turnId))),
        'every accepted turn ended',
        60_000,
      );
      d.child.kill('SIGTERM');
      const exit = await d.exited;
      if (exit.code !== 0) throw new Error(`the last daemon exited ${exit.code} ${exit.signal}`);
      await stream.ended;
      take();
      stream.close();
      const restarted = [...ends.values()].filter((list) =>
        list.some((end) => end.event.payload?.code === 'daemon_restart'),
      ).length;
      return {
        accepted,
        ends,
        signals,
        unendedAtSigterm,
        unloaded,
        restarted,
        lifetimes: lifetime + 1,
        dataDir,
        files,
        lastStderr: d.err(),
      };
    }

    // A random moment: after a random number of frames, plus a random instant.
    const target = 20 + Math.floor(rnd() * 120);
    await until(
      () =>
        take().length >= target &&
        frames.some((f) => f.event.event_type === 'turn.started' && f.event.agent_id === ids[2]),
      `${target} frames in lifetime ${lifetime}`,
    );
    await sleep(Math.floor(rnd() * 40));
    const signal: NodeJS.Signals =
      lifetime === 0 ? 'SIGTERM' : lifetime === 1 ? 'SIGKILL' : rnd() < 0.5 ? 'SIGTERM' : 'SIGKILL';
    signals.push(signal);
    d.child.kill(signal);
    const exit = await d.exited;
    loading = false;
    await Promise.all(loads);
    await stream.ended;
    take();
    stream.close();
    if (signal === 'SIGTERM') {
      if (exit.code !== 0) throw new Error(`SIGTERM: exit ${exit.code} ${exit.signal}: ${d.err().slice(-2000)}`);
      // Every turn that started in this lifetime ended on its stream before the stream closed.
      const endedHere = new Set(frames.flatMap((f) => endedBy(f.event)));
      for (const f of frames)
        if (f.event.event_type === 'turn.started' && !endedHere.has(f.event.turn_id!))
          unendedAtSigterm.push(f.event.turn_id!);
      unloaded += frames.filter(
        (f) => f.event.event_type === 'agent.error' && f.event.payload.code === 'unloaded',
      ).length;
    }
  }
  throw new Error('unreachable');
}
