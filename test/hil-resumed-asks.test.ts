/**
 * An ask that waited across a restart (docs/runtime.md "Human in the loop"): the resumed call asking the
 * same question takes up the stored ask and any answer given meanwhile; asking a different question (a
 * restarted MCP server's new link) supersedes it, and an answer to the old question is not handed over.
 * Two HilStores on one agent file stand for the daemon before and after the restart.
 */
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { HilStore, type HilListener } from '../kernel/runtime/hil.js';
import { agentConfig } from './helpers/agent-file.js';
import { tempDir } from './helpers/daemon.js';

type Heard = Array<[string, string, string]>;

function listener(heard: Heard): HilListener {
  return {
    taskCreated() {},
    taskFinished() {},
    requested(kind, item) {
      heard.push(['requested', kind, (item as { requestId: string }).requestId]);
    },
    resolved(kind, id, resolution) {
      heard.push(['resolved', kind, `${id} ${resolution}`]);
    },
  };
}

/** An ask of call `c1` in turn `turn`, left pending by a shutdown; the store after the restart. */
async function askedBeforeRestart(t: Test, question: string, schema?: Record<string, unknown>) {
  const file = AgentFile.create(join(tempDir(t, 'agt-hil-resume-'), 'a.agt'), agentConfig({ name: 'a' }));
  t.teardown(() => file.close());
  const before = new HilStore(listener([]), file);
  const stop = new AbortController();
  const waiting = before.ask({ question, ...(schema ? { schema } : {}), ...where, signal: stop.signal });
  const requestId = before.listAsks()[0]!.requestId;
  before.park();
  stop.abort();
  await t.rejects(waiting, 'the wait ends with the daemon');
  const heard: Heard = [];
  return { requestId, after: new HilStore(listener(heard), file), heard, file };
}
const where = { loop: 'main', turnId: 'turn', callId: 'c1:ask:1' };
const form = { type: 'object', properties: { email: { type: 'string' } } };

t.test('the same question takes up the ask and the answer given meanwhile', async (t) => {
  const { requestId, after, heard } = await askedBeforeRestart(t, 'Which email?', form);
  after.respondAsk(requestId, 'a@b.c');
  const answered = await after.ask({
    question: 'Which email?',
    schema: form,
    ...where,
    signal: AbortSignal.timeout(5000),
  });
  t.same(answered, { answer: 'a@b.c', fromCaller: false });
  t.same(heard, [['resolved', 'ask', `${requestId} answered`]], 'nothing asked again');
});

t.test('the same question still pending: the same ask, announced again', async (t) => {
  const { requestId, after, heard } = await askedBeforeRestart(t, 'Which email?', form);
  const waiting = after.ask({ question: 'Which email?', schema: form, ...where, signal: AbortSignal.timeout(5000) });
  t.same(heard, [['requested', 'ask', requestId]]);
  after.respondAsk(requestId, 'a@b.c');
  t.equal((await waiting).answer, 'a@b.c');
});

t.test('a different question supersedes the pending ask', async (t) => {
  const { requestId, after, heard, file } = await askedBeforeRestart(t, 'Open http://old/link');
  const waiting = after.ask({ question: 'Open http://new/link', ...where, signal: AbortSignal.timeout(5000) });
  const asks = after.listAsks();
  t.same(
    asks.map((ask) => ask.question),
    ['Open http://new/link'],
    'only the new one is listed',
  );
  const fresh = asks[0]!.requestId;
  t.not(fresh, requestId);
  t.same(heard, [
    ['resolved', 'ask', `${requestId} superseded`],
    ['requested', 'ask', fresh],
  ]);
  t.equal(file.hil.getPrompt(requestId)?.status, 'superseded');
  t.throws(() => after.respondAsk(requestId, 'done'), { code: 'not_found' }, 'the old one takes no answer');
  after.respondAsk(fresh, 'done');
  t.equal((await waiting).answer, 'done');
});

t.test('a changed schema is a different question', async (t) => {
  const { requestId, after } = await askedBeforeRestart(t, 'Which email?', form);
  const other = { ...form, required: ['email'] };
  const waiting = after.ask({ question: 'Which email?', schema: other, ...where, signal: AbortSignal.timeout(5000) });
  const asks = after.listAsks();
  t.equal(asks.length, 1);
  t.not(asks[0]!.requestId, requestId);
  t.same(asks[0]!.schema, other);
  after.respondAsk(asks[0]!.requestId, 'a@b.c');
  t.equal((await waiting).answer, 'a@b.c');
});

t.test('an answer to the old question is not handed to a different one', async (t) => {
  const { requestId, after, heard, file } = await askedBeforeRestart(t, 'Open http://old/link');
  after.respondAsk(requestId, 'done');
  const waiting = after.ask({ question: 'Open http://new/link', ...where, signal: AbortSignal.timeout(5000) });
  const [fresh] = after.listAsks();
  t.equal(fresh?.question, 'Open http://new/link', 'asked anew');
  t.same(heard, [
    ['resolved', 'ask', `${requestId} answered`],
    ['requested', 'ask', fresh!.requestId],
  ]);
  t.match(file.hil.getPrompt(requestId), { status: 'answered', delivered: true }, 'kept as answered, not handed over');
  after.respondAsk(fresh!.requestId, 'decline');
  t.equal((await waiting).answer, 'decline');
});
