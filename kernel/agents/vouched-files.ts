/**
 * Agent files an extension vouches for (`agentFileVouchers`, contracts/agent-file-vouchers.ts): a file the
 * daemon did not write last is opened without the read in the file reader's child process when an extension
 * answers for its exact content (the fleet, for the replica it is restoring). The hash is computed here, from
 * the file as it is on disk, so a vouch names content, never a path that could be swapped; a file with a
 * write-ahead log beside it is never vouched for (its content is not the main file's bytes alone).
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { agentFileVouchers } from '@agt/contracts';
import type { ExtensionPoints } from '../extensions/points.js';

/** The extension that vouches for the file's content, or null (none does, or the file cannot be hashed). */
export async function voucherOf(points: ExtensionPoints, filePath: string): Promise<string | null> {
  const vouchers = points.providers(agentFileVouchers);
  if (vouchers.length === 0) return null;
  try {
    const wal = await stat(`${filePath}-wal`).catch(() => null);
    if (wal && wal.size > 0) return null;
    const sha256 = createHash('sha256')
      .update(await readFile(filePath))
      .digest('hex');
    for (const { owner, value } of vouchers) {
      try {
        if (value.vouches(sha256) === true) return owner;
      } catch {
        // A voucher that throws vouches for nothing.
      }
    }
  } catch {
    // Unreadable here: the child process reads it and says why.
  }
  return null;
}
