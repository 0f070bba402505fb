/**
 * The summary reader's worker, in process: it stays for the next files, a worker that dies while reading
 * (out of memory at its start, by a lowered heap limit) fails that file with the reason and the next read
 * gets a new one, and the daemon's shutdown ends it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { SUMMARY_LIMITS, SummaryReader } from '../kernel/credentials/summary-reader.js';
import { createAgentFile } from './helpers/agent-file.js';
import { bootDaemon, tempDir } from './helpers/daemon.js';

t.test('the summary worker stays, is replaced when it dies, and ends with the daemon', async (t) => {
  const dir = tempDir(t);
  const d = await bootDaemon(t);
  const summaries = d.daemon.kernel.summaries;
  await createAgentFile(dir, { name: 'stranger', autostart: true });
  writeFileSync(join(dir, 'hostile.agt'), Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(8192, 0xa5)]));
  const res = await d.request('POST', '/agents/autostart', { trackedDirs: [dir] });
  t.same(
    res.body.failed.map((f: any) => f.filePath),
    [join(dir, 'hostile.agt')],
  );
  t.ok(summaries.running, 'one worker stays for the next files, a failed read notwithstanding');

  const reader = new SummaryReader();
  t.teardown(() => reader.close());
  const limit = SUMMARY_LIMITS.maxOldGenerationSizeMb;
  SUMMARY_LIMITS.maxOldGenerationSizeMb = 1;
  await t.rejects(reader.read(join(dir, 'stranger.agt')), {
    code: 'load_failed',
    message: /reading its summary failed: the reader thread/,
  });
  SUMMARY_LIMITS.maxOldGenerationSizeMb = limit;
  t.match(await reader.read(join(dir, 'stranger.agt')), { config: { name: 'stranger' }, passwordProtected: false });
  t.equal(reader.started, 2);

  await d.daemon.shutdown('test');
  t.notOk(summaries.running, 'shutdown ends the worker');
  await t.rejects(summaries.read(join(dir, 'stranger.agt')), { code: 'unavailable' });
});
