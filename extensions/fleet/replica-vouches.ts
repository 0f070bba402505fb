/**
 * The replicas this daemon is restoring, by SHA-256, offered to the kernel as `agentFileVouchers`
 * (contracts/agent-file-vouchers.ts): the kernel then opens a restored copy without first reading it whole
 * in a child process. A replica is vouched for only between its download, checked against the SHA-256 its
 * writer stored with it, and the end of its restore. What the vouch rests on (docs/fleet.md "Replication",
 * docs/security.md): only holders of the fleet's NATS credentials can write the object store, and every one
 * of them is a daemon of the fleet that wrote the copy from an agent file it had open itself.
 */
import type { AgentFileVoucher } from '@agt/contracts';

export class ReplicaVouches implements AgentFileVoucher {
  private readonly held = new Map<string, number>();

  /** Vouches for `sha256` until the returned function is called. */
  hold(sha256: string): () => void {
    this.held.set(sha256, (this.held.get(sha256) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(sha256) ?? 1) - 1;
      if (left > 0) this.held.set(sha256, left);
      else this.held.delete(sha256);
    };
  }

  vouches(sha256: string): boolean {
    return this.held.has(sha256);
  }
}
