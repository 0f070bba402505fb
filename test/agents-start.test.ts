import t from 'tap';
import { join } from 'node:path';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { createAgentFile } from './helpers/agent-file.js';

t.test('POST /agents/{id}/start: by path through the review gate, then by name', async (t) => {
  const dir = tempDir(t);
  const filePath = await createAgentFile(dir, {
    name: 'starter',
    triggers: { on_startup: { enabled: true, targets: [{ scope: 'agent' }] } },
  });
  const quiet = await createAgentFile(dir, { name: 'quiet' });
  // No tracked-folders: nothing locates an agent that is not loaded by its name.
  const d = await runDaemon(t, { extensions: { extensions: [] } });
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
  t.match(
    again.body,
    { success: true, loaded: false, startupTriggered: false },
    'a started agent is not started twice',
  );

  await d.request('POST', '/agents/review/accept', { filePath: quiet });
  const noTrigger = await d.request('POST', byPath(quiet));
  t.match(noTrigger.body, { loaded: true, startupTriggered: false }, 'no on_startup target: nothing fired');

  const unknown = await d.request('POST', '/agents/nobody/start');
  t.match(
    unknown,
    { status: 503, body: { code: 'unavailable', error: /tracked-folders/ } },
    'no agent locator offered',
  );
  t.equal((await d.request('POST', byPath(`${dir}/missing.agt`))).status, 404);
});

t.test('POST /agents/{id}/start by a reference the agent locator resolves', async (t) => {
  const dir = tempDir(t);
  const one = await createAgentFile(dir, {
    name: 'finder-one',
    triggers: { on_startup: { enabled: true, targets: [{ scope: 'agent' }] } },
  });
  const twin = await createAgentFile(dir, { name: 'finder-twin' });
  const module = join(ROOT, 'test/fixtures/extensions/points/provider.ts');
  const agents = { solo: [one], twins: [one, twin], gone: [] as string[], boom: [] as string[] };
  const d = await runDaemon(t, {
    extensions: { extensions: [{ name: 'points-provider', module, enabled: true, config: { agents } }] },
  });

  const unreviewed = await d.request('POST', '/agents/solo/start');
  t.match(
    unreviewed,
    { status: 403, body: { code: 'AGENT_REVIEW_REQUIRED' } },
    'a located file passes the review gate',
  );
  await d.request('POST', '/agents/review/accept', { filePath: one });
  const started = await d.request('POST', '/agents/solo/start');
  t.match(started, {
    status: 200,
    body: { success: true, loaded: true, startupTriggered: true, agent: { name: 'finder-one' } },
  });
  t.match(
    await d.request('POST', '/agents/finder-one/start'),
    { status: 200, body: { loaded: false } },
    'loaded now: found by name',
  );

  const ambiguous = await d.request('POST', '/agents/twins/start');
  t.match(ambiguous, {
    status: 409,
    body: { code: 'ambiguous_agent', candidates: [{ filePath: one }, { filePath: twin }] },
  });
  t.match(await d.request('POST', '/agents/gone/start'), { status: 404, body: { code: 'not_found' } });
  t.match(await d.request('POST', '/agents/boom/start'), {
    status: 503,
    body: { code: 'unavailable', error: /index is broken/ },
  });
});
