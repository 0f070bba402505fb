/**
 * Bursts of chats against the built daemon (docs/performance.md, "Bursts of chats"):
 *
 * - 1,000 chats sent at once over 10 agents never hold `GET /health` for a second, even beside the rest of the
 *   suite on a loaded 2-core machine (the bench row of `npm run bench` measures the real figures, tens of
 *   milliseconds), every chat is accepted and every accepted turn ends exactly once;
 * - accepts commit in groups (kernel/agents/group-commit.ts), yet each 202 still means the row is in the
 *   agent file: a batch of chats sent at once, the daemon killed (SIGKILL) as soon as the last 202 arrived,
 *   and every accepted turn is in the file and ends exactly once after the restart.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import Database from 'libsql';
import t, { type Test } from 'tap';
import { reply, startFakeOpenAI } from './fakes/openai.js';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, type SpawnedDaemon, tempDir } from './helpers/daemon.js';
import { eventLog, type EventLog } from './helpers/events.js';
import { endedBy, until } from './helpers/turn-ends.js';

/** Keep-alive connections the chats share: under the daemon's cap per client address. */
const CONNECTIONS = 100;

function chat(d: SpawnedDaemon, agent: Agent, agentId: string, text: string): Promise<{ status: number; body: any }> {
  const url = new URL(`${d.url}/agents/${agentId}/chat`);
  const payload = JSON.stringify({ text });
  return new Promise((done, fail) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${d.token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => done({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', fail);
    req.end(payload);
  });
}

/** Sends `count` chats at once, round-robin over `agentIds`; resolves with every answer. */
async function burst(t: Test, d: SpawnedDaemon, agentIds: string[], count: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  t.teardown(() => agent.destroy());
  return Promise.all(
    Array.from({ length: count }, (_, i) => chat(d, agent, agentIds[i % agentIds.length]!, `burst ${i}`)),
  );
}

/** How many times each turn id ended on `log` so far. */
function endCounts(log: EventLog): Map<string, number> {
  const counts = new Map<string, number>();
  for (const event of log.events) for (const id of endedBy(event as never)) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

/** Waits until every id in `turnIds` ended on `log`. */
function allEnded(log: EventLog, turnIds: string[], ms: number): Promise<unknown> {
  return until(
    () => {
      const counts = endCounts(log);
      return turnIds.every((id) => counts.has(id));
    },
    'every accepted turn ended',
    ms,
  );
}

/** Agent files made in `dir` for `provider`'s model, loaded (and started) by the daemon. */
async function loadAgents(
  d: SpawnedDaemon,
  dir: string,
  count: number,
  provider: string,
): Promise<Array<{ agentId: string; filePath: string }>> {
  const loaded: Array<{ agentId: string; filePath: string }> = [];
  for (let i = 0; i < count; i++) {
    const filePath = await createAgentFile(dir, {
      name: `${provider}-${i}`,
      model: { provider, model_id: 'fake-model' },
    });
    loaded.push({ agentId: await load(d, filePath), filePath });
  }
  return loaded;
}

async function load(d: SpawnedDaemon, filePath: string): Promise<string> {
  const res = await d.request('POST', '/agents/load', { filePath });
  if (res.status !== 200) throw new Error(`agents/load: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** Two providers: `fake` answers at once; `silent` is the model the kill test's agent uses. */
const providers = (fake: string, silent: string) => ({
  providers: [
    { id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake, defaultModel: 'fake-model' },
    { id: 'silent', type: 'openai-compatible', name: 'Silent', baseUrl: silent, defaultModel: 'fake-model' },
  ],
});

const answering = await startFakeOpenAI(t, [], { fallback: reply.text('ok') });
// Never answers: the kill test's chats are all still open when the daemon dies.
const stalling = await startFakeOpenAI(t, [], { fallback: reply.stall() });
const d = await runDaemon(t, { settings: providers(answering.baseUrl, stalling.baseUrl) });
const agentsDir = tempDir(t);

t.test('1,000 chats at once over 10 agents: /health keeps answering, every turn ends once', async (t) => {
  const agentIds = (await loadAgents(d, agentsDir, 10, 'fake')).map((agent) => agent.agentId);
  const log = await eventLog(t, d);

  // The probes run in a process of their own: this one is busy reading the burst's answers and events.
  const prober = spawn(process.execPath, [join(ROOT, 'test/fixtures/probes/health-prober.mjs'), d.url], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.teardown(() => prober.kill());
  let report = '';
  prober.stdout.setEncoding('utf8').on('data', (chunk: string) => (report += chunk));
  const finished = once(prober, 'close');
  await once(prober.stderr, 'data');

  const answers = await burst(t, d, agentIds, 1000);
  const accepted = answers.filter((a) => a.status === 202).map((a) => a.body.turnId as string);
  t.equal(accepted.length, 1000, 'every chat accepted');
  await allEnded(log, accepted, 60_000);
  prober.stdin.end();
  await finished;
  const { probes, statuses } = JSON.parse(report) as { probes: number[]; statuses: number[] };

  const counts = endCounts(log);
  t.same(
    accepted.filter((id) => counts.get(id) !== 1),
    [],
    'every accepted turn ended exactly once',
  );
  t.ok(probes.length >= 2, `${probes.length} /health probes during the burst`);
  t.same(statuses, [200], 'every probe answered 200');
  const slowest = Math.max(...probes);
  t.ok(slowest < 1000, `the slowest /health answer during the burst took ${slowest.toFixed(0)} ms (< 1 s)`);
});

t.test('kill -9 right after a batch of 202s: every accepted chat is in the file and ends once', async (t) => {
  const [created] = await loadAgents(d, agentsDir, 1, 'silent');
  // A chat that arrives after the model call started interrupts that turn, which then ends in this lifetime.
  const before = await eventLog(t, d);
  const answers = await burst(t, d, [created!.agentId], 50);
  await d.stop('SIGKILL');
  const accepted = answers.filter((a) => a.status === 202).map((a) => a.body.turnId as string);
  t.equal(accepted.length, 50, 'every chat accepted');

  const db = new Database(created!.filePath, { readonly: true });
  const inFile = new Set(
    (db.prepare('SELECT turn_id FROM agt_queue').all() as Array<{ turn_id: string }>).map((row) => row.turn_id),
  );
  db.close();

  // After the restart the `silent` provider answers: every recovered chat runs or has its end announced.
  writeFileSync(d.env.AGT_DAEMON_SETTINGS!, JSON.stringify(providers(answering.baseUrl, answering.baseUrl)));
  const again = await d.restart();
  await load(again, created!.filePath);
  // As a client following the daemon resumes (docs/events.md): an end the kill caught between its write and
  // its record is repeated after the restart, except to a client that resumes past where it first went out.
  const after = await eventLog(t, again, `?since=${before.resume.cursor}&epoch=${before.resume.epoch}`);
  // The first lifetime's stream may still be delivering what it wrote before the kill: both are read.
  await until(
    () => {
      const [first, second] = [endCounts(before), endCounts(after)];
      return accepted.every((id) => first.has(id) || second.has(id));
    },
    'every accepted turn ended',
    30_000,
  );
  const [endedBefore, endedAfter] = [endCounts(before), endCounts(after)];
  t.same(
    accepted.filter((id) => !inFile.has(id) && !endedBefore.has(id)),
    [],
    'every accepted chat that had not ended was in the agent file after kill -9',
  );
  t.same(
    accepted.filter((id) => (endedBefore.get(id) ?? 0) + (endedAfter.get(id) ?? 0) !== 1),
    [],
    'every accepted turn ended exactly once over the two lifetimes',
  );
});
