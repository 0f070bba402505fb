/**
 * OTLP headers with sealed values, on the built daemon exporting to a local OTLP/HTTP receiver: a settings
 * `otlpHeaders` entry without `valueEnv` stops traces (and says so in the extension's problem) until
 * `PUT /metrics/otlp-headers/{name}` seals a value; then the collector receives the header, and the value is in
 * no answer, settings, event, log line or the store file in clear. `DELETE` drops it and traces stop again. Last,
 * the data directory loses its runtime key: a restarted daemon (owner identity locked) cannot open the value, says
 * so naming the header and exports nothing until the owner identity is unlocked.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { reply, startFakeOpenAI } from './fakes/openai.js';
import { runDaemon, shippedManifest, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { startOtlpReceiver } from './helpers/otlp-receiver.js';

const SECRET = 'sealed-key-4b9d2e7a';
const receiver = await startOtlpReceiver(t);
const fake = await startFakeOpenAI(t, () => reply.text('done'));
const d = await runDaemon(t, {
  extensions: shippedManifest({ telemetry: { scheduledDelayMillis: 20 } }),
  env: { AGT_LOG_LEVEL: 'debug' },
  settings: {
    providers: [{ id: 'fake', type: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, defaultModel: 'fake-1' }],
    telemetry: { otlpEndpoint: receiver.url, otlpProtocol: 'http/json', otlpHeaders: [{ name: 'x-api-key' }] },
  },
});
async function must(method: string, path: string, body: unknown, status: number) {
  const answer = await d.request(method, path, body);
  if (answer.status !== status) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}
await must('POST', '/identity/create', { passphrase: 'sealed headers passphrase' }, 201);
const created = await must('POST', '/agents/create', { name: 'Ann', directory: tempDir(t, 'agt-otlpseal-') }, 201);
const agent = created.agentId as string;
await must('PATCH', `/agents/${agent}/config`, { model: { provider: 'fake', model_id: 'fake-1' } }, 200);
const log = await eventLog(t, d);
const answers: string[] = [];
async function call(method: string, path: string, body?: unknown) {
  const answer = await d.request(method, path, body);
  answers.push(JSON.stringify(answer.body));
  return answer;
}
const problem = async () => (await call('GET', '/runtime/extensions/telemetry')).body.problem as string | null;

async function turn() {
  const turnId = (await d.request('POST', `/agents/${agent}/chat`, { text: 'hi' })).body.turnId as string;
  const end = await log.waitFor((e) => e.turn_id === turnId && e.event_type === 'turn.completed', 'the turn ends');
  return { turnId, end };
}
async function exported(turnId: string) {
  const until = Date.now() + 15_000;
  while (!receiver.spans.some((s) => s.attributes['agt.turn.id'] === turnId)) {
    if (Date.now() > until) throw new Error('the turn was not exported');
    await new Promise((done) => setTimeout(done, 20));
  }
}

t.test('a listed header without a sealed value stops traces and says so', async (t) => {
  t.match(await problem(), /x-api-key.*no sealed value.*not exported/);
  const listing = await call('GET', '/metrics/otlp-headers');
  t.same(listing.body, { headers: [{ name: 'x-api-key', set: false, listed: true }] });
  const before = await turn();
  const put = await call('PUT', '/metrics/otlp-headers/X-Api-Key', { value: SECRET });
  t.equal(put.status, 200);
  t.same(put.body, { name: 'x-api-key', set: true, listed: true }, 'names only, any case');
  t.equal(await problem(), null, 'no problem once the value is sealed');
  const after = await turn();
  await exported(after.turnId);
  t.notOk(
    receiver.spans.some((s) => s.attributes['agt.turn.id'] === before.turnId),
    'the turn before the value was sealed was not exported',
  );
  t.ok(receiver.headers.length > 0);
  for (const headers of receiver.headers) t.equal(headers['x-api-key'], SECRET, 'the collector receives the value');
});

t.test('bad names and values are refused without echoing the value', async (t) => {
  const broken = `${SECRET}\r\nx-injected: 1`;
  const badValue = await call('PUT', '/metrics/otlp-headers/x-api-key', { value: broken });
  t.equal(badValue.status, 400, 'a line break in a value');
  t.notOk(JSON.stringify(badValue.body).includes(SECRET));
  t.equal((await call('PUT', '/metrics/otlp-headers/Host', { value: 'x' })).status, 400, 'Host is the exporter’s');
  t.equal((await call('PUT', '/metrics/otlp-headers/content-type', { value: 'x' })).status, 400);
  t.equal((await call('PUT', '/metrics/otlp-headers/x-api-key', { value: '' })).status, 400, 'an empty value');
});

t.test('the value is nowhere but at the collector', async (t) => {
  const listing = await call('GET', '/metrics/otlp-headers');
  t.same(listing.body, { headers: [{ name: 'x-api-key', set: true, listed: true }] });
  await call('GET', '/settings');
  await call('GET', '/runtime/extensions');
  for (const answer of answers) t.notOk(answer.includes(SECRET), 'in no answer');
  t.notOk(JSON.stringify(log.events).includes(SECRET), 'in no event');
  t.notOk((d.stdout() + d.stderr()).includes(SECRET), 'in no log line');
  const store = readFileSync(join(d.dataDir, 'extension-secrets', 'telemetry.json'), 'utf8');
  t.notOk(store.includes(SECRET), 'sealed in the store file');
});

t.test('DELETE drops the value and traces stop again', async (t) => {
  const dropped = await call('DELETE', '/metrics/otlp-headers/x-api-key');
  t.equal(dropped.status, 200);
  t.same(dropped.body, { name: 'x-api-key', set: false, listed: true });
  t.match(await problem(), /no sealed value/);
  t.equal((await call('DELETE', '/metrics/otlp-headers/x-api-key')).status, 404, 'none to drop');
});

t.test('a data directory without its runtime key: nothing exported until the owner identity is unlocked', async (t) => {
  t.equal((await call('PUT', '/metrics/otlp-headers/x-api-key', { value: SECRET })).status, 200);
  // The data key is sealed to the runtime's key and the owner's: without the first, only an unlocked owner opens it.
  await d.stop();
  rmSync(join(d.dataDir, 'runtime-enc-key'));
  rmSync(join(d.dataDir, 'runtime-enc-key.pub'), { force: true });
  const again = await d.restart();
  const identity = await again.request('GET', '/identity');
  t.equal(identity.body.status, 'locked', 'a restart leaves the identity locked');
  const extension = await again.request('GET', '/runtime/extensions/telemetry');
  t.match(extension.body.problem, /x-api-key.*cannot be opened.*unlock the owner identity/, 'the problem names it');
  t.notOk(JSON.stringify(extension.body).includes(SECRET));
  const log = await eventLog(t, again);
  const loaded = await again.request('POST', '/agents/load', { filePath: created.filePath });
  t.equal(loaded.status, 200, 'the agent loads while the identity is locked');
  const turnOn = async () => {
    const started = await again.request('POST', `/agents/${agent}/chat`, { text: 'hi' });
    t.equal(started.status, 202, 'the agent chats');
    const turnId = started.body.turnId as string;
    await log.waitFor((e) => e.turn_id === turnId && e.event_type === 'turn.completed', 'the turn ends');
    return turnId;
  };
  const spans = receiver.spans.length;
  const locked = await turnOn();
  const unlocked = await again.request('POST', '/identity/unlock', { passphrase: 'sealed headers passphrase' });
  t.equal(unlocked.status, 200);
  // The unlock is an `identity.changed` event; the exporter starts after it, and only then is the problem gone.
  const until = Date.now() + 15_000;
  while ((await again.request('GET', '/runtime/extensions/telemetry')).body.problem !== null) {
    if (Date.now() > until) throw new Error('the problem stayed after the unlock');
    await new Promise((done) => setTimeout(done, 20));
  }
  const after = await turnOn();
  await exported(after);
  t.notOk(
    receiver.spans.slice(spans).some((s) => s.attributes['agt.turn.id'] === locked),
    'the turn while locked was not exported',
  );
  t.equal(receiver.headers.at(-1)?.['x-api-key'], SECRET, 'the value opened with the owner key reaches the collector');
});
