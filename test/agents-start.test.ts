import t from 'tap';
import { bootDaemon, tempDir } from './helpers/daemon.js';
import { createAgentFile } from './helpers/agent-file.js';

t.test('POST /agents/{id}/start: by path through the review gate, then by name', async (t) => {
  const dir = tempDir(t);
  const filePath = await createAgentFile(dir, {
    name: 'starter',
    triggers: { on_startup: { enabled: true, targets: [{ scope: 'agent' }] } },
  });
  const quiet = await createAgentFile(dir, { name: 'quiet' });
  const d = await bootDaemon(t);
  const byPath = (path: string) => `/agents/${encodeURIComponent(path)}/start`;

  const unreviewed = await d.request('POST', byPath(filePath));
  t.equal(unreviewed.status, 403);
  t.match(unreviewed.body, { code: 'AGENT_REVIEW_REQUIRED', filePath });
  t.same((await d.request('GET', '/agents')).body, [], 'nothing loaded');

  t.equal((await d.request('POST', '/agents/review/accept', { filePath })).status, 200);
  const started = await d.request('POST', byPath(filePath));
  t.equal(started.status, 200);
  t.match(started.body, { success: true, loaded: true, startupTriggered: true, agent: { name: 'starter' } });

  const again = await d.request('POST', '/agents/starter/start');
  t.match(again.body, { success: true, loaded: false, startupTriggered: false }, 'a started agent is not started twice');

  await d.request('POST', '/agents/review/accept', { filePath: quiet });
  const noTrigger = await d.request('POST', byPath(quiet));
  t.match(noTrigger.body, { loaded: true, startupTriggered: false }, 'no on_startup target: nothing fired');

  const unknown = await d.request('POST', '/agents/nobody/start');
  t.equal(unknown.status, 404);
  t.match(unknown.body.error, /tracked-folders/);
  t.equal((await d.request('POST', byPath(`${dir}/missing.agt`))).status, 404);
});
