/**
 * The file reader's child process, in process: it stays for the next files; a child that dies while
 * reading (a file whose TEXT is not UTF-8 aborts libsql, a lowered heap limit) fails that file with the
 * reason and the next read gets a new child; the daemon's shutdown ends it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { FILE_READER_LIMITS, FileReader } from '../kernel/credentials/file-reader.js';
import { createAgentFile } from './helpers/agent-file.js';
import { bootDaemon, tempDir } from './helpers/daemon.js';
import { fileWithBadConfig, fileWithBadValue } from './helpers/hostile-file.js';

t.test('the file reader stays, is replaced when it dies, and ends with the daemon', async (t) => {
  const dir = tempDir(t);
  const d = await bootDaemon(t);
  const reader = d.daemon.kernel.fileReader;
  await createAgentFile(dir, { name: 'stranger', autostart: true });
  writeFileSync(join(dir, 'hostile.agt'), Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(8192, 0xa5)]));
  const res = await d.request('POST', '/agents/autostart', { trackedDirs: [dir] });
  t.same(
    res.body.failed.map((f: any) => f.filePath),
    [join(dir, 'hostile.agt')],
  );
  t.ok(reader.running, 'one child stays for the next files, a failed read notwithstanding');

  const own = new FileReader();
  const stranger = join(dir, 'stranger.agt');
  await t.rejects(own.summary(await fileWithBadConfig(dir, 'bad-config')), {
    code: 'load_failed',
    message: /reading it failed: the reader process stopped \(SIGABRT\)/,
  });
  t.match(await own.summary(stranger), { config: { name: 'stranger' }, passwordProtected: false });
  const planted = await fileWithBadValue(dir, 'planted');
  t.match(await own.summary(planted), { config: { name: 'planted' } }, 'the summary does not read the planted value');
  await t.rejects(own.readWhole(planted), { code: 'load_failed', message: /SIGABRT/ }, 'reading it whole does');
  await own.readWhole(stranger);
  t.equal(own.started, 3, 'each dead child was replaced by a new one');

  const limit = FILE_READER_LIMITS.maxOldGenerationSizeMb;
  FILE_READER_LIMITS.maxOldGenerationSizeMb = 1;
  const tiny = new FileReader();
  await t.rejects(tiny.summary(stranger), { code: 'load_failed', message: /the reader process stopped/ });
  FILE_READER_LIMITS.maxOldGenerationSizeMb = limit;
  await tiny.close();
  await own.close();
  t.notOk(own.running, 'close ends the child');

  await d.daemon.shutdown('test');
  t.notOk(reader.running, 'shutdown ends the child');
  await t.rejects(reader.summary(stranger), { code: 'unavailable' });
});
