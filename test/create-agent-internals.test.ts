/**
 * `POST /agents/create` against a runtime that behaves otherwise than the shipped one, in process (its
 * hooks replaced): without a start hook the agent is created and loaded, not started; a runtime that
 * refuses the agent answers 422 load_failed and leaves the created file for a later load.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { bootDaemon, replaceRuntimeHooks, tempDir } from './helpers/daemon.js';

t.test('runtime hooks: no start hook, an attach that fails', async (t) => {
  const dir = tempDir(t);
  const d = await bootDaemon(t);
  t.equal((await d.request('POST', '/identity/create', { passphrase: 'owner passphrase' })).status, 201);

  const restoreStart = replaceRuntimeHooks(d.daemon, { start: undefined });
  const noStart = await d.request('POST', '/agents/create', { name: 'No Start Hook', directory: dir, start: true });
  restoreStart();
  t.equal(noStart.status, 201);
  t.equal(noStart.body.started, false, 'a runtime without a start hook: created and loaded, not started');
  t.equal((await d.request('GET', `/agents/${noStart.body.agentId}`)).status, 200);

  const restore = replaceRuntimeHooks(d.daemon, {
    attach: async () => {
      throw new Error('runtime refused');
    },
  });
  const failed = await d.request('POST', '/agents/create', { name: 'Unlucky', directory: dir });
  restore();
  t.equal(failed.status, 422);
  t.equal(failed.body.code, 'load_failed');
  t.equal(failed.body.filePath, join(dir, 'unlucky.agt'));
  t.ok(existsSync(failed.body.filePath), 'the created file is left in place');
  t.equal((await d.request('GET', `/agents/${failed.body.agentId}`)).status, 404, 'not loaded');
  const reload = await d.request('POST', '/agents/load', { filePath: failed.body.filePath, requireReview: true });
  t.equal(reload.status, 200, 'it loads later, reviewed');
});
