import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setKdfCostForTests } from '../kernel/identity/kdf.js';
import { bootDaemon, tempDir, type TestDaemon } from './helpers/daemon.js';
import { createAgentFile } from './helpers/agent-file.js';

setKdfCostForTests({ N: 1024, r: 8, p: 1 });

/** Creates an agent through the API (reviewed here), marks it autostart, unloads it. */
async function createAutostart(d: TestDaemon, dir: string, name: string, password?: string): Promise<void> {
  const created = await d.request('POST', '/agents/create', { name, directory: dir, ...(password ? { password } : {}) });
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  const { config } = (await d.request('GET', `/agents/${created.body.agentId}/config`)).body;
  const put = await d.request('PUT', `/agents/${created.body.agentId}/config`, { ...config, autostart: true });
  if (put.status !== 200) throw new Error(JSON.stringify(put.body));
  await d.request('POST', `/agents/${created.body.agentId}/unload`);
}

t.test('autostart starts reviewed autostart agents and says why it skipped the others', async (t) => {
  const dir = tempDir(t);
  const d = await bootDaemon(t);
  t.equal((await d.request('POST', '/identity/create', { passphrase: 'owner passphrase' })).status, 201);
  await createAutostart(d, dir, 'Auto');
  await createAutostart(d, dir, 'Locked', 'agent password');
  await createAgentFile(dir, { name: 'manual', autostart: false });
  await createAgentFile(dir, { name: 'stranger', autostart: true });
  writeFileSync(join(dir, 'broken.agt'), 'not a database at all');
  t.same((await d.request('GET', '/agents')).body, [], 'nothing loaded before the scan');

  const res = await d.request('POST', '/agents/autostart', { trackedDirs: [dir] });
  t.equal(res.status, 200);
  t.equal(res.body.scanned, 5);
  t.same(res.body.started.map((s: any) => s.name), ['Auto']);
  t.same(
    res.body.skipped.map((s: any) => [s.name, s.reason]).sort(),
    [['Locked', 'password_protected'], ['manual', 'not_autostart'], ['stranger', 'unreviewed']],
  );
  t.same(res.body.failed.map((f: any) => f.filePath), [join(dir, 'broken.agt')]);
  t.same((await d.request('GET', '/agents')).body.map((a: any) => a.name), ['Auto'], 'only the eligible agent loaded');

  const again = await d.request('POST', '/agents/autostart', { trackedDirs: [dir], maxDepth: 0 });
  t.match(again.body.skipped.find((s: any) => s.name === 'Auto'), { reason: 'already_loaded' });
  t.equal((await d.request('POST', '/agents/autostart', { trackedDirs: ['relative/dir'] })).status, 400);
  t.equal((await d.request('POST', '/agents/autostart', {})).status, 400);
});
