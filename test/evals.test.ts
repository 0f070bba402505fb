/**
 * Evals on the built daemon (docs/evals.md): a suite captured from a real session of an agent replays
 * deterministically against a fake model (its tool answered from the recording, not run), passes, and
 * fails once the agent's instructions change its behaviour (`agt eval run` exits 1, JUnit says why); two
 * models side by side; the judge and a QuickJS scorer; the live agent and its file untouched; progress as
 * `eval.*` events; bad input refused.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { agtInProcess } from './helpers/cli-in-process.js';
import { runDaemon, shippedManifest, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { reply, startFakeOpenAI, type RecordedRequest } from './fakes/openai.js';

type Message = { role: string; content: unknown; tool_calls?: unknown[] };
const LOOK_UP = 'Look things up with memory_search before answering.';

/** What a memory_search result says (its memories' texts), or the result itself. */
function found(result: string): string {
  try {
    return (JSON.parse(result) as { memories: Array<{ text: string }> }).memories.map((m) => m.text).join(' ');
  } catch {
    return result;
  }
}

/**
 * The model: with instructions that say to look things up it searches first, then answers with what the
 * search returned; otherwise it answers without a tool. Model `forgetful` never knows. The judge model
 * grades an answer that quotes a search as good.
 */
function model(request: RecordedRequest) {
  const messages = request.body.messages as Message[];
  const system = String(messages[0]?.content ?? '');
  const last = messages[messages.length - 1]!;
  if (request.body.model === 'judge') {
    const good = String(last.content).includes('From my notes');
    return reply.text(JSON.stringify({ score: good ? 0.9 : 0.1, reason: good ? 'quotes its notes' : 'guesses' }));
  }
  if (request.body.model === 'forgetful') return reply.text('I do not know.');
  if (request.body.model === 'slow') return reply.stall();
  if (last.role === 'tool') return reply.text(`From my notes: ${found(String(last.content))}`);
  if (system.includes(LOOK_UP)) {
    const question = String([...messages].reverse().find((m) => m.role === 'user')?.content ?? '');
    return reply.toolCalls([{ name: 'memory_search', args: { query: question } }]);
  }
  return reply.text('I think it is coffee.');
}

const fake = await startFakeOpenAI(t, model);
const provider = { id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'm1' };
const folder = tempDir(t);
const path = await createAgentFile(folder, {
  name: 'evaluee',
  model: { provider: 'fake', model_id: 'm1' },
  instructions: LOOK_UP,
});
let d = await runDaemon(t, {
  extensions: shippedManifest({ providers: { maxRetries: 0 } }),
  settings: { providers: [provider] },
});
let log = await eventLog(t, d);
const loaded = await d.request('POST', '/agents/load', { filePath: path });
if (loaded.status !== 200) throw new Error(`load: ${loaded.status} ${JSON.stringify(loaded.body)}`);
const id = loaded.body.id as string;
const agt = (...args: string[]) =>
  agtInProcess(args, { AGT_DAEMON_URL: d.url, AGT_DAEMON_TOKEN: d.token, NO_COLOR: '1' });

const saved = await d.request('POST', `/agents/${id}/memory`, { text: 'The owner drinks green tea.' });
if (saved.status !== 201) throw new Error(`memory: ${saved.status} ${JSON.stringify(saved.body)}`);
const chat = await d.request('POST', `/agents/${id}/chat?wait=true`, { text: 'Which tea does the owner drink?' });
// Checked here, before the tests: tap ends a file whose root asserts before its first subtest.
if (chat.status !== 200 || !/From my notes: .*green tea/.test(chat.body.text))
  throw new Error(`the live agent did not search its memory: ${chat.status} ${JSON.stringify(chat.body)}`);
const liveRows = async () => (await d.request('GET', `/agents/${id}/chat`)).body.total as number;
const rowsBefore = await liveRows();

const suitePath = join(folder, 'suite.json');

t.test('agt eval capture writes the turn as a case: input, recorded tool call and answer', async (t) => {
  const run = await agt('eval', 'capture', 'evaluee', '-o', suitePath);
  t.equal(run.code, 0, run.stderr);
  const suite = JSON.parse(readFileSync(suitePath, 'utf8'));
  t.equal(suite.cases.length, 1);
  const [captured] = suite.cases;
  t.equal(captured.input, 'Which tea does the owner drink?');
  t.match(captured.recorded.tools, [{ name: 'memory_search', args: { query: 'Which tea does the owner drink?' } }]);
  t.match(captured.recorded.tools[0].result.content, /green tea/);
  t.equal(captured.recorded.answer, chat.body.text);
  t.match(captured.recorded.source, { agentId: id, agentName: 'evaluee' });
  t.same(captured.assert, [{ tool: 'memory_search' }, { similar: { min: 0.8 } }], 'starting assertions');

  // The owner edits the case: the recorded result is what the copy's tool answers (not a live search).
  captured.recorded.tools[0].result.content = 'REPLAYED: the owner drinks oolong.';
  captured.recorded.answer = 'From my notes: REPLAYED: the owner drinks oolong.';
  captured.assert.push(
    { contains: 'oolong' },
    { tool: 'memory_search', args: { type: 'object', required: ['query'], properties: { query: { pattern: 'tea' } } } },
    { maxModelCalls: 2 },
    { judge: { provider: 'fake', model: 'judge', rubric: 'The answer cites what the agent found.' } },
    {
      lambda: {
        source: 'export function score(c) { return { pass: c.toolCalls.length === 1, reason: "one search" } }',
      },
    },
  );
  writeFileSync(suitePath, JSON.stringify(suite, null, 2));
});

t.test('agt eval run replays the recording on a copy and passes; the live agent is untouched', async (t) => {
  const junit = join(folder, 'pass.xml');
  const from = log.events.length;
  const run = await agt('eval', 'run', suitePath, '--agent', 'evaluee', '--junit', junit, '--json');
  t.equal(run.code, 0, run.stderr);
  const record = JSON.parse(run.stdout);
  t.equal(record.status, 'passed');
  const [result] = record.results;
  t.equal(result.answer, 'From my notes: REPLAYED: the owner drinks oolong.', 'the tool answered from the recording');
  t.same(
    result.assertions.map((a: { kind: string; pass: boolean }) => [a.kind, a.pass]),
    [
      ['tool', true],
      ['similar', true],
      ['contains', true],
      ['tool', true],
      ['maxModelCalls', true],
      ['judge', true],
      ['lambda', true],
    ],
  );
  t.match(readFileSync(junit, 'utf8'), /<testsuite name="[^"]*" tests="1" failures="0" errors="0"/);

  t.equal(await liveRows(), rowsBefore, "the live agent's conversation did not change");
  const agents = (await d.request('GET', '/agents')).body as Array<{ name: string }>;
  t.same(
    agents.map((a) => a.name),
    ['evaluee'],
    'no copy is left loaded',
  );
  t.same(readdirSync(join(d.dataDir, 'evals', 'work')), [], 'the copies are removed');
  const types = log.events
    .slice(from)
    .filter((e) => e.event_type.startsWith('eval.') && e.agent_id === id)
    .map((e) => e.event_type);
  t.same(types, ['eval.run.started', 'eval.case.finished', 'eval.run.finished'], 'progress as events of the agent');
});

t.test('the same suite fails once the instructions change the behaviour; CLI exits 1, JUnit says why', async (t) => {
  const patch = (instructions: string) => d.request('PATCH', `/agents/${id}/config`, { instructions });
  const patched = await patch('Answer from what you know.');
  t.equal(patched.status, 200, JSON.stringify(patched.body));
  const junit = join(folder, 'fail.xml');
  const run = await agt('eval', 'run', suitePath, '--agent', 'evaluee', '--junit', junit);
  t.equal(run.code, 1, 'a failed suite fails the command');
  t.match(run.stdout, /failed Which tea|failed .*turn 1/);
  const xml = readFileSync(junit, 'utf8');
  t.match(xml, /failures="1"/);
  t.match(xml, /<failure message="[^"]*tool: memory_search called 0 time/);
  t.match(xml, /answer: I think it is coffee\./);
  t.equal((await patch(LOOK_UP)).status, 200);
});

t.test('two models side by side: pass rate, calls and answers per variant; diff of two runs', async (t) => {
  const run = await agt(
    'eval',
    'run',
    suitePath,
    '--agent',
    'evaluee',
    '-m',
    'fake/m1',
    '-m',
    'fake/forgetful',
    '--json',
  );
  t.equal(run.code, 1, 'one variant fails');
  const record = JSON.parse(run.stdout);
  t.match(record.variants, [
    { label: 'fake/m1', passRate: 1, passed: 1, modelCalls: 2, toolCalls: 1 },
    { label: 'fake/forgetful', passRate: 0, failed: 1, modelCalls: 1, toolCalls: 0 },
  ]);
  const answers = Object.fromEntries(
    record.results.map((r: { variant: string; answer: string }) => [r.variant, r.answer]),
  );
  t.same(answers['fake/forgetful'], 'I do not know.');

  const runs = (await d.request('GET', '/evals/runs')).body.runs as Array<{ id: string }>;
  t.ok(runs.length >= 3, 'runs are kept');
  const diff = await agt('eval', 'diff', runs[2]!.id, record.id, '--json');
  t.equal(diff.code, 0, diff.stderr);
  t.match(JSON.parse(diff.stdout).cases, [{ same: true }], 'same answer on the first variant of both runs');
});

t.test('repeat shows each run; an agent file by path is copied without loading it', async (t) => {
  const run = await d.request('POST', '/evals/runs', {
    suite: JSON.parse(readFileSync(suitePath, 'utf8')),
    agent: path,
    repeat: 2,
  });
  t.equal(run.status, 202);
  t.equal(run.body.total, 2);
  const done = await log.waitFor(
    (e) => e.event_type === 'eval.run.finished' && (e.payload as { run_id: string }).run_id === run.body.id,
    'the run by file',
  );
  t.match(done.payload, { status: 'passed', passed: 2 });
  const record = (await d.request('GET', `/evals/runs/${run.body.id}`)).body;
  t.same(record.results.map((r: { repeat: number }) => r.repeat).sort(), [0, 1]);
  t.same(record.variants[0].flaky, []);
});

t.test('a run is cancelled; one a killed daemon left reads back as interrupted, its copies gone', async (t) => {
  const suite = JSON.parse(readFileSync(suitePath, 'utf8'));
  const started = (model: string) =>
    d.request('POST', '/evals/runs', { suite, agent: 'evaluee', variants: [{ model }] }).then((answer) => {
      t.equal(answer.status, 202);
      return answer.body.id as string;
    });
  const turnBegun = (from: number) =>
    log.waitFor((e) => e.event_type === 'turn.started' && e.agent_id !== id, 'the copy began its turn', { from });

  let from = log.events.length;
  const first = await started('fake/slow');
  await turnBegun(from);
  const cancelled = await d.request('POST', `/evals/runs/${first}/cancel`);
  t.match(cancelled, { status: 200, body: { status: 'cancelled', results: [] } });
  t.same(readdirSync(join(d.dataDir, 'evals', 'work')), []);
  t.same(
    ((await d.request('GET', '/agents')).body as Array<{ name: string }>).map((a) => a.name),
    ['evaluee'],
  );

  from = log.events.length;
  const second = await started('fake/slow');
  await turnBegun(from);
  await d.stop('SIGKILL');
  t.ok(readdirSync(join(d.dataDir, 'evals', 'work')).length > 0, 'the killed run left its copy');
  d = await d.restart();
  log = await eventLog(t, d);
  t.match((await d.request('GET', `/evals/runs/${second}`)).body, { status: 'interrupted' });
  t.notOk(existsSync(join(d.dataDir, 'evals', 'work')), 'removed at start');
  const reloaded = await d.request('POST', '/agents/load', { filePath: path });
  t.equal(reloaded.status, 200);
});

t.test('bad input: clear 4xx', async (t) => {
  const suite = JSON.parse(readFileSync(suitePath, 'utf8'));
  t.match(await d.request('POST', '/evals/runs', { suite, agent: 'nobody' }), { status: 404 });
  t.match(await d.request('POST', '/evals/runs', { suite: { name: 'x', cases: [] }, agent: 'evaluee' }), {
    status: 400,
  });
  t.match(
    await d.request('POST', '/evals/runs', {
      suite: { name: 'x', cases: [{ name: 'c', input: 'i', assert: [{ nope: 1 }] }] },
      agent: 'evaluee',
    }),
    { status: 400 },
  );
  t.match(await d.request('POST', '/evals/runs', { suite, agent: 'evaluee', variants: [{ model: 'no-slash' }] }), {
    status: 400,
  });
  t.match(await d.request('GET', '/evals/runs/ev-00000000-0000-0000-0000-000000000000'), { status: 404 });
  t.match(await d.request('GET', '/evals/runs/..%2F..%2Fsettings'), { status: 404 });
  const runs = (await d.request('GET', '/evals/runs')).body.runs as Array<{ id: string }>;
  t.match(await d.request('POST', `/evals/runs/${runs[0]!.id}/cancel`), { status: 409, body: { code: 'conflict' } });
  t.match(await d.request('POST', '/evals/capture', { agent: 'evaluee', turns: 0 }), { status: 400 });
  t.ok(existsSync(join(d.dataDir, 'evals', 'runs')));
});
