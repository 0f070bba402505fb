/**
 * An extension that is off answers 503, at the daemon level: with the `providers` extension disabled in the manifest
 * (and an app provider configured in settings), `/providers` answers 503 `unavailable` and a chat is accepted (202) but
 * its turn ends in `agent.error` with `code: "unavailable"`.
 */
import { join } from 'node:path';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { eventLog } from './helpers/events.js';
import { turnEnd } from './helpers/turn-wait.js';

t.test('providers off: /providers is 503 and a turn ends in agent.error unavailable', async (t) => {
  const d = await runDaemon(t, {
    extensions: {
      extensions: [{ name: 'providers', module: join(ROOT, 'extensions/providers/index.ts'), enabled: false }],
    },
    settings: {
      providers: [
        { id: 'local', type: 'openai-compatible', name: 'Local', baseUrl: 'http://127.0.0.1:9/v1', defaultModel: 'm' },
      ],
    },
  });
  const log = await eventLog(t, d);

  const providers = await d.request('GET', '/providers');
  t.equal(providers.status, 503);
  t.equal(providers.body.code, 'unavailable');

  const path = await createAgentFile(tempDir(t), { model: { provider: 'local', model_id: 'm' } });
  const loaded = await d.request('POST', '/agents/load', { filePath: path });
  t.equal(loaded.status, 200);
  const chat = await d.request('POST', `/agents/${loaded.body.id}/chat`, { text: 'hello' });
  t.equal(chat.status, 202);
  const turnId = chat.body.turnId as string;
  const end = await turnEnd(log, turnId);
  t.equal(end?.event_type, 'agent.error');
  t.match(end?.payload, { code: 'unavailable', turn_id: turnId });
  t.equal(end?.agent_id, loaded.body.id);
});
