import { readdirSync, readlinkSync } from 'node:fs';
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, tempDir } from './helpers/daemon.js';

/**
 * Open descriptors of process `pid` (the daemon's, or `self`) that are not sockets (keep-alive HTTP
 * connections come and go), and those pointing into `dir` (agent files, WAL, shm).
 */
function descriptors(pid: number | 'self', dir: string): { total: number; inDir: number } {
  let total = 0;
  let inDir = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith('socket:')) continue;
      total++;
      if (target.startsWith(dir)) inDir++;
    } catch {
      // Closed between listing and reading.
    }
  }
  return { total, inDir };
}

t.test('200 agents load at once and unload leaving no file handle open', async (t) => {
  const d = await runDaemon(t);
  const pid = d.child.pid!;
  const dir = tempDir(t, 'agt-scale-');
  const paths = await Promise.all(Array.from({ length: 200 }, (_, i) => createAgentFile(dir, { name: `scale-${i}` })));
  t.equal(descriptors('self', dir).inDir, 0, 'creating files left nothing open');

  // Warm up once so lazily created process-wide descriptors (thread pools, ...) are in the baseline.
  const warm = await d.request('POST', '/agents/load', { filePath: paths[0] });
  await d.request('POST', `/agents/${warm.body.id}/unload`);
  const baseline = descriptors(pid, dir);
  t.equal(baseline.inDir, 0, 'an unloaded agent leaves nothing open');

  const loads = await Promise.all(paths.map((filePath) => d.request('POST', '/agents/load', { filePath })));
  t.ok(
    loads.every((res) => res.status === 200),
    'all 200 loaded',
  );
  t.equal((await d.request('GET', '/agents')).body.length, 200);
  t.ok(descriptors(pid, dir).inDir >= 200, 'each loaded agent holds its file open');

  const unloads = await Promise.all(loads.map((res) => d.request('POST', `/agents/${res.body.id}/unload`)));
  t.ok(
    unloads.every((res) => res.status === 200 && res.body.success === true),
    'all 200 unloaded',
  );
  t.same((await d.request('GET', '/agents')).body, []);
  const after = descriptors(pid, dir);
  t.equal(after.inDir, 0, 'no descriptor into the agents folder is left');
  t.ok(
    after.total <= baseline.total,
    `non-socket descriptor count back to baseline (${after.total} vs ${baseline.total})`,
  );
});
