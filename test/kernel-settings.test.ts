import t from 'tap';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runDaemon } from './helpers/daemon.js';

t.test('settings routes validate, persist and refuse key material', async (t) => {
  const d = await runDaemon(t, { settings: { meshPort: 7300 } });
  const file = join(d.dataDir, 'settings.json');
  t.same((await d.request('GET', '/settings')).body, { meshPort: 7300 });

  const patched = await d.request('PATCH', '/settings', { meshLan: true, agentsFolder: '/srv/agents' });
  t.equal(patched.status, 200);
  t.same(patched.body, { meshPort: 7300, meshLan: true, agentsFolder: '/srv/agents' });
  t.same(JSON.parse(readFileSync(file, 'utf8')), patched.body, 'persisted');
  t.equal(statSync(file).mode & 0o777, 0o600);

  const removed = await d.request('PATCH', '/settings', { meshLan: null });
  t.same(removed.body, { meshPort: 7300, agentsFolder: '/srv/agents' });

  const one = await d.request('GET', '/settings/meshPort');
  t.same(one.body, { key: 'meshPort', value: 7300 });
  t.equal((await d.request('GET', '/settings/meshLan')).status, 404);
  t.equal((await d.request('GET', '/settings/nonsense')).status, 400);

  const put = await d.request('PUT', '/settings/providers', {
    value: [
      {
        id: 'local',
        type: 'openai-compatible',
        name: 'Local',
        baseUrl: 'http://127.0.0.1:11434/v1',
        apiKeyEnv: 'LOCAL_KEY',
      },
    ],
  });
  t.equal(put.status, 200);
  const providers = await d.request('GET', '/providers');
  t.same(
    providers.body.providers.map((p: { id: string }) => p.id),
    ['local'],
    'applied at once: the providers extension serves it',
  );

  const invalid = await d.request('PUT', '/settings/meshPort', { value: 'high' });
  t.equal(invalid.status, 400);
  t.equal(invalid.body.code, 'bad_request');
  t.match(invalid.body.error, /meshPort/);
  const unknown = await d.request('PATCH', '/settings', { nope: 1 });
  t.equal(unknown.status, 400);

  const secret = await d.request('PUT', '/settings/providers', {
    value: [{ id: 'x', type: 'openai', name: 'X', baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-live-123' }],
  });
  t.equal(secret.status, 403);
  t.notMatch(JSON.stringify(secret.body), 'sk-live-123');
  t.notMatch(readFileSync(file, 'utf8'), 'sk-live-123');

  for (const name of ['AGT_DAEMON_TOKEN', 'AGT_OWNER_PASSPHRASE']) {
    const exfiltrate = await d.request('PUT', '/settings/providers', {
      value: [{ id: 'x', type: 'openai', name: 'X', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: name }],
    });
    t.equal(exfiltrate.status, 400, `apiKeyEnv ${name} refused: the daemon's own secrets are never a provider key`);
  }
});
