/**
 * The kernel's launcher as extensions get it (`ctx.launcher.autostart`, what tracked-folders calls at boot
 * and for files its watcher sees): a file already loaded is skipped as `already_loaded`. In-process: no
 * client route calls the launcher with a list of files (POST /agents/autostart scans folders).
 */
import t from 'tap';
import { bootDaemon, tempDir } from './helpers/daemon.js';
import { reviewedAgentFile, trackedManifest } from './helpers/tracked-folders.js';

t.test('ctx.launcher.autostart skips a loaded file as already_loaded', async (t) => {
  const agents = tempDir(t);
  const d = await bootDaemon(t, { extensions: trackedManifest(), settings: { trackedFolders: [agents] } });
  const path = await reviewedAgentFile(d, agents, { name: 'early', autostart: true });
  t.equal((await d.request('POST', '/agents/load', { filePath: path, requireReview: true })).status, 200);
  const report = await d.daemon.kernel.launcher.autostart([path]);
  t.match(report, { scanned: 1, started: [], skipped: [{ name: 'early', reason: 'already_loaded' }], failed: [] });
});
