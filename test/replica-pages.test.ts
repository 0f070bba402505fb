/**
 * A running agent file read as its pages (`ctx.agents.snapshots.pages`, kernel/storage/page-image.ts) and
 * the fleet's page deltas (extensions/fleet/replica-pages.ts), on real agent files: the image is the file
 * as committed, without the live lease, and passes SQLite's integrity check once written out; it is not read
 * inside a transaction; a delta after a write holds only the pages the write changed and, applied to the
 * image before it, gives the image after it.
 */
import { join } from 'node:path';
import t from 'tap';
import { applyDelta, encodeDelta, pageDigests } from '../extensions/fleet/replica-pages.js';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { pageImage } from '../kernel/storage/snapshot.js';
import { agentConfig } from './helpers/agent-file.js';
import { tempDir } from './helpers/daemon.js';
import { openCopy } from './helpers/fleet-replicas.js';

const dir = tempDir(t);
const path = join(dir, 'pages.agt');
const file = AgentFile.create(path, agentConfig({ name: 'pages' }));
t.teardown(() => file.close());
file.lease.acquire({ owner: 'daemon-a', pid: process.pid, host: 'here' }, 30_000, () => true);

t.test('the image is the committed file without the live lease', async (t) => {
  t.ok(file.lease.read(), 'the live file holds a lease row');
  const image = pageImage('agt-pages', path, file.raw);
  t.ok(image, 'a small file is read as its pages');
  t.equal(image!.data.length % image!.pageSize, 0, 'whole pages');
  t.equal(Buffer.from(image!.data.subarray(0, 16)).toString('latin1'), 'SQLite format 3\0');
  openCopy(dir, 'image.agt', image!.data, (db) => {
    t.match(db.prepare('PRAGMA integrity_check').get(), { integrity_check: 'ok' }, 'it passes the integrity check');
    t.match(db.prepare('SELECT count(*) AS n FROM agt_lease').get(), { n: 0 }, 'the lease row is left out');
    t.match(db.prepare('SELECT count(*) AS n FROM agt_config').get(), {
      n: file.raw.all('SELECT 1 FROM agt_config').length,
    });
  });
  t.ok(file.lease.read(), 'the live file keeps its lease');
});

t.test('not read inside a transaction (its own writes would show)', async (t) => {
  file.raw.transaction(() => {
    t.equal(pageImage('agt-pages', path, file.raw), undefined);
  });
  t.ok(pageImage('agt-pages', path, file.raw), 'read again once it committed');
});

t.test('a delta holds the changed pages and rebuilds the image after the write', async (t) => {
  const before = pageImage('agt-pages', path, file.raw)!;
  const digests = pageDigests(before.data, before.pageSize);
  t.equal(encodeDelta(before.data, before.pageSize, digests, digests).length, 0, 'nothing changed, nothing sent');
  file.files.write('notes.md', 'x'.repeat(10_000));
  const after = pageImage('agt-pages', path, file.raw)!;
  const delta = encodeDelta(after.data, after.pageSize, pageDigests(after.data, after.pageSize), digests);
  const pages = after.data.length / after.pageSize;
  t.ok(
    delta.length > 0 && delta.length < after.data.length,
    `${delta.length / (after.pageSize + 4)} of ${pages} pages`,
  );
  const rebuilt = applyDelta(Buffer.from(before.data), delta, after.pageSize, pages);
  t.ok(rebuilt.equals(after.data), 'the image before with the delta is the image after');
  openCopy(dir, 'rebuilt.agt', rebuilt, (db) => {
    t.match(db.prepare('PRAGMA integrity_check').get(), { integrity_check: 'ok' });
    t.match(db.prepare("SELECT length(content) AS n FROM agt_files WHERE path = 'notes.md'").get(), { n: 10_000 });
  });
  t.throws(() => applyDelta(Buffer.from(before.data), delta.subarray(1), after.pageSize, pages), /whole pages/);
});
