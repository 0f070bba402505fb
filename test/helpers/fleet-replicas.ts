/**
 * An agent's replica as the fleet stores it (docs/fleet.md, "Replication"), read back by a test: the agent's
 * messages on the replica stream `agt_fleet_<fleet>_replicas` (a base, then deltas of changed pages) and the
 * copy they make, the base (or the object-store copy it names) with each delta applied
 * (extensions/fleet/replica-pages.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { applyDelta } from '../../extensions/fleet/replica-pages.js';
import { libsql } from '../../kernel/agents/libsql.js';

export interface StoredCopy {
  /** Each message's body, in order. */
  messages: Uint8Array[];
  /** Each message's kind (`base`, `delta`, `object`). */
  kinds: string[];
  /** The copy the messages make. */
  bytes: Buffer;
  /** The last message's header (`Agt-Replica`). */
  last: Record<string, unknown>;
}

export async function storedCopy(nc: NatsConnection, fleet: string, agentId: string): Promise<StoredCopy> {
  const jsm = await jetstreamManager(nc);
  const subject = `agt.fleet.${fleet}.replicas.${agentId}`;
  const messages: Uint8Array[] = [];
  const kinds: string[] = [];
  let bytes: Buffer = Buffer.alloc(0);
  let last: Record<string, unknown> = {};
  for (let seq = 0; ; ) {
    const message = await jsm.streams.getMessage(`agt_fleet_${fleet}_replicas`, {
      seq,
      next_by_subj: subject,
    } as never);
    if (!message) break;
    last = JSON.parse(message.header.get('Agt-Replica')) as Record<string, unknown>;
    const pageSize = Number(last.pageSize);
    kinds.push(String(last.kind));
    messages.push(message.data);
    if (last.kind === 'base') bytes = Buffer.from(message.data);
    else if (last.kind === 'object') {
      const store = await new Objm(nc).open(`agt_fleet_${fleet}_agents`);
      bytes = Buffer.from((await store.getBlob(String(last.object))) ?? new Uint8Array(0));
    } else bytes = applyDelta(bytes, message.data, pageSize, Number(last.bytes) / pageSize);
    seq = message.seq + 1;
  }
  return { messages, kinds, bytes, last };
}

/** Writes `bytes` to `dir`/`name` and runs `read` on it, opened read-only. */
export function openCopy<T>(
  dir: string,
  name: string,
  bytes: Uint8Array,
  read: (db: InstanceType<ReturnType<typeof libsql>>) => T,
): T {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  const db = new (libsql())(path, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}
