/**
 * Agent files an extension vouches for (kernel/agents/vouched-files.ts, point `agentFileVouchers`): the kernel
 * hashes the file itself and skips the read in a child process only for content a provider vouches for; never
 * for a file with a write-ahead log beside it, nor when a provider throws.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { agentFileVouchers } from '@agt/contracts';
import { voucherOf } from '../kernel/agents/vouched-files.js';
import { ExtensionPoints } from '../kernel/extensions/points.js';
import { tempDir } from './helpers/daemon.js';

const sha256 = (bytes: string) => createHash('sha256').update(bytes).digest('hex');

t.test('only content a provider vouches for, hashed by the kernel', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'copy.agt');
  writeFileSync(file, 'the replica as stored');
  const points = new ExtensionPoints();
  t.equal(await voucherOf(points, file), null, 'no provider: nobody vouches');

  const vouched = new Set([sha256('the replica as stored')]);
  points.provide('fleet', agentFileVouchers, { vouches: (hash) => vouched.has(hash) });
  t.equal(await voucherOf(points, file), 'fleet', 'the provider vouches for this content');

  writeFileSync(file, 'the replica, changed after its check');
  t.equal(await voucherOf(points, file), null, 'other content at the same path is not vouched for');

  writeFileSync(file, 'the replica as stored');
  writeFileSync(`${file}-wal`, 'frames the hash does not cover');
  t.equal(await voucherOf(points, file), null, 'a file with a write-ahead log beside it is never vouched for');
  writeFileSync(`${file}-wal`, '');
  t.equal(await voucherOf(points, file), 'fleet', 'an empty write-ahead log holds nothing');

  t.equal(await voucherOf(points, join(dir, 'missing.agt')), null, 'a file that cannot be read: the child says why');
});

t.test('a provider that throws vouches for nothing; another may', async (t) => {
  const file = join(tempDir(t), 'copy.agt');
  writeFileSync(file, 'content');
  const points = new ExtensionPoints();
  points.provide('broken', agentFileVouchers, {
    vouches: () => {
      throw new Error('boom');
    },
  });
  t.equal(await voucherOf(points, file), null);
  points.provide('other', agentFileVouchers, { vouches: (hash) => hash === sha256('content') });
  t.equal(await voucherOf(points, file), 'other');
});
