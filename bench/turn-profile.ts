/**
 * A CPU profile of chat turns: the BUILT daemon (`node --cpu-prof bin/agtd.mjs`, every shipped
 * extension) against an instant fake model, `turns` chats one at a time (each waits for its
 * `turn.completed` on `GET /events`), then a clean shutdown so the profile is written to
 * .cache/agt/profiles/. Read it with any .cpuprofile viewer (Chrome DevTools, speedscope) or
 * `node bench/profile-top.mjs <file>` (self time by function and by package).
 *
 * Run: `node --import tsx bench/turn-profile.ts [turns=300]` (after `npm run build`; it runs dist/ even
 * when sources changed since).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { reply } from '../test/fakes/script.js';
import { startFakeOpenAI } from '../test/fakes/openai.js';
import { buildEntry, call, freePort, percentile, TOKEN } from './http.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const turns = Number(process.argv[2]) || 300;
const cleanups: Array<() => unknown> = [];
const fake = await startFakeOpenAI({ teardown: (fn) => void cleanups.push(fn) }, [], { fallback: reply.text('ok') });
const dataDir = mkdtempSync(join(tmpdir(), 'agt-bench-'));
const profiles = join(ROOT, '.cache/agt/profiles');
mkdirSync(profiles, { recursive: true });
writeFileSync(
  join(dataDir, 'settings.json'),
  JSON.stringify({
    providers: [
      { id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-model' },
    ],
  }),
);
const port = await freePort();
// The build's entry itself: bin/agtd.mjs would fall back to the sources when any changed since the build.
const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${profiles}`, ...buildEntry('dist')], {
  cwd: ROOT,
  env: {
    PATH: process.env.PATH ?? '',
    HOME: dataDir,
    AGT_DAEMON_SETTINGS: join(dataDir, 'settings.json'),
    AGT_DAEMON_TOKEN: TOKEN,
    AGT_DAEMON_PORT: String(port),
    AGT_LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
try {
  for (;;) {
    try {
      if ((await call(port, 'GET', '/health', undefined, false)).status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 20));
  }
  await call(port, 'POST', '/identity/create', { passphrase: 'bench passphrase, not a secret' });
  const created = await call(port, 'POST', '/agents/create', { name: 'Profiled', provider: 'fake', start: true });
  const agentId = created.body.agentId as string;
  const completed = new Map<string, () => void>();
  const events = httpRequest(
    { host: '127.0.0.1', port, path: `/events?agentId=${agentId}`, headers: { authorization: `Bearer ${TOKEN}` } },
    (res) => {
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const data = buffer
            .slice(0, end)
            .split('\n')
            .find((line) => line.startsWith('data: {"cursor"'));
          buffer = buffer.slice(end + 2);
          const event = data ? JSON.parse(data.slice(6)).event : undefined;
          if (event?.event_type === 'turn.completed') completed.get(event.payload.turn_id)?.();
        }
      });
    },
  );
  events.end();
  cleanups.push(() => events.destroy());
  const ms: number[] = [];
  for (let i = 0; i < turns; i++) {
    const since = performance.now();
    const res = await call(port, 'POST', `/agents/${agentId}/chat`, { text: `turn ${i}` });
    if (res.status !== 202) throw new Error(`chat answered ${res.status}`);
    await new Promise<void>((done) => completed.set(res.body.turnId, done));
    ms.push(performance.now() - since);
  }
  console.log(JSON.stringify({ turns, medianMs: percentile(ms, 50), p95Ms: percentile(ms, 95) }));
  await call(port, 'POST', '/daemon/shutdown', {});
  await new Promise((done) => child.once('exit', done));
} finally {
  if (child.exitCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups) await cleanup();
  rmSync(dataDir, { recursive: true, force: true });
}
