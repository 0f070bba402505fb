/**
 * Agent files an extension answers for, so the kernel opens them without first reading them whole in a
 * child process. The kernel reads a file it did not write last in a child process before it opens it
 * (docs/security.md, an `.agt` file the daemon did not write last), because libsql aborts its process on some malformed values;
 * an extension that restores a copy it can vouch for (the fleet, for a replica another daemon of the fleet
 * stored, verified by its SHA-256) says so here, and the kernel skips that read for a file with exactly
 * that content.
 */
import { createExtensionPoint } from './extension.js';

/** @beta */
export interface AgentFileVoucher {
  /**
   * True when the provider answers for a file whose bytes have this SHA-256 (lowercase hex): it knows who
   * wrote that content and trusts them as it trusts itself. Asked, synchronously, only for a file the
   * kernel did not write last and that has no write-ahead log beside it; the kernel computes the hash
   * itself. Vouch for content only while it is being restored, and say in the extension's docs whose
   * writing the vouch rests on: a file vouched for is opened in the daemon's own process.
   */
  vouches(sha256: string): boolean;
}

/**
 * All providers; a file is vouched for when any of them vouches for its content. Offered by fleet.
 *
 * @beta
 */
export const agentFileVouchers = createExtensionPoint<AgentFileVoucher>('agt.agent-file-vouchers', {
  providers: 'all',
});
