/**
 * Provider kinds belong to the providers extension, not the kernel: the settings accept any kind name,
 * the extension lists a kind it does not serve as `unsupported_type` and refuses to check it, list its
 * models or resolve it (422 `unsupported_provider_type`, naming the kinds it serves). Built daemon; how
 * the kernel resolves a model call for such a kind is in providers-kinds-internals.test.ts.
 */
import t from 'tap';
import { join } from 'node:path';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { turnEnd } from './helpers/turn-wait.js';

const MODULE = join(ROOT, 'extensions/providers/index.ts');
const BEDROCK = { id: 'bed', type: 'bedrock', name: 'Bedrock', baseUrl: 'http://127.0.0.1:9' };
const SERVES =
  /which the providers extension does not serve \(it serves anthropic, openai, openai-compatible, openrouter\)/;

t.test('a kind the providers extension does not serve', async (t) => {
  const d = await runDaemon(t, {
    extensions: { extensions: [{ name: 'providers', module: MODULE, enabled: true }] },
    settings: {
      providers: [BEDROCK, { id: 'local', type: 'openai-compatible', name: 'Local', baseUrl: 'http://127.0.0.1:9/v1' }],
    },
  });

  t.test('the kernel accepts any kind name, but only a name', async (t) => {
    t.equal((await d.request('GET', '/settings')).body.providers[0].type, 'bedrock');
    const bad = await d.request('PUT', '/settings/providers', { value: [{ ...BEDROCK, type: 'Not a kind!' }] });
    t.equal(bad.status, 400);
    t.match(bad.body.error, /providers/);
  });

  t.test('listed and read as unsupported_type; check and models refused', async (t) => {
    const list = await d.request('GET', '/providers');
    t.same(
      list.body.providers.map((p: any) => [p.id, p.type, p.status]),
      [
        ['bed', 'bedrock', 'unsupported_type'],
        ['local', 'openai-compatible', 'unchecked'],
      ],
    );
    t.match((await d.request('GET', '/providers/bed')).body, {
      id: 'bed',
      type: 'bedrock',
      status: 'unsupported_type',
      lastCheck: null,
    });
    for (const [method, path] of [
      ['POST', '/providers/bed/check'],
      ['GET', '/providers/bed/models'],
    ] as const) {
      const res = await d.request(method, path);
      t.equal(res.status, 422, path);
      t.match(res.body, { code: 'unsupported_provider_type', provider: 'bed', type: 'bedrock', error: SERVES });
    }
  });

  t.test("an agent's turn on that kind ends in the clear error", async (t) => {
    const log = await eventLog(t, d);
    const path = await createAgentFile(tempDir(t), { model: { provider: 'bed', model_id: 'titan' } });
    const id = (await d.request('POST', '/agents/load', { filePath: path })).body.id;
    const chat = await d.request('POST', `/agents/${id}/chat`, { text: 'hello' });
    t.equal(chat.status, 202);
    const end = await turnEnd(log, chat.body.turnId);
    t.match(end, { event_type: 'agent.error', payload: { code: 'unsupported_provider_type' } });
    t.match(JSON.stringify(end.payload), SERVES, 'naming the kinds it serves');
  });
});
