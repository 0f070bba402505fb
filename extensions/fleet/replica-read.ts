/**
 * The newest replica of an agent's file, written to a path (docs/fleet.md, "Failover"): the agent's
 * messages on the replica stream (replica-log.ts) read in order, the base (in the message, or the object
 * store's copy it points to) with each delta applied. Each delta must name the copy before it (`prev`), and
 * the result must have the SHA-256 its last message states. A replica stored before the replica stream
 * existed (a whole copy in the object store, its metadata beside it) is read as it was stored.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { placementKey } from './keys.js';
import type { ReplicaEntry } from './replica-log.js';
import { applyDelta } from './replica-pages.js';
import type { Replicator } from './replicas.js';

/** How long reading a copy from the object store may take before it fails. */
const STALL_MS = 15_000;

/** A turn's end the copy carries (restore.ts publishes it): its message id and data on the fleet stream. */
export interface CarriedEnd {
  id: string;
  data: string;
}

export interface FetchedReplica {
  /** The copy fails its checks (a broken chain, a wrong SHA-256): nothing usable was written. */
  damaged: boolean;
  /** The newest copy is not the one asked for (`wanted`): nothing was read or written. */
  changed?: boolean;
  turnId: string;
  bytes: number;
  ends: CarriedEnd[];
  /** The SHA-256 its writer stated and the copy written has (absent when the writer stated none). */
  sha256?: string;
}

/**
 * Writes the newest copy to `path` (a new file, 0600); undefined when the fleet has no copy of the agent.
 * `wanted`: the SHA-256 the newest copy must have (a planned move's final copy), else `changed`.
 */
export async function fetchReplica(
  replicator: Replicator,
  agentId: string,
  path: string,
  wanted?: string,
): Promise<FetchedReplica | undefined> {
  const entries = await replicator.log.read(agentId);
  if (entries.length === 0) return fetchStoredObject(replicator, agentId, path, wanted);
  const last = entries[entries.length - 1]!.header;
  const fetched = { damaged: true, turnId: last.turnId, bytes: last.bytes, ends: validEnds(last.ends) };
  if (wanted && last.sha256 !== wanted) return { ...fetched, damaged: false, changed: true };
  const image = await assemble(replicator, entries);
  if (!image || createHash('sha256').update(image).digest('hex') !== last.sha256) return fetched;
  writeFileSync(path, image, { flag: 'wx', mode: 0o600 });
  return { ...fetched, damaged: false, sha256: last.sha256 };
}

/** The base with its deltas applied, or undefined when the chain is broken. */
async function assemble(replicator: Replicator, entries: ReplicaEntry[]): Promise<Buffer | undefined> {
  // From the last base: a base stored while the messages were read (rolling up those before it) starts anew.
  let from = entries.length - 1;
  while (from > 0 && entries[from]!.header.kind === 'delta') from -= 1;
  const [first, ...deltas] = entries.slice(from);
  if (!first || first.header.kind === 'delta') return undefined;
  let image: Buffer;
  if (first.header.kind === 'base') image = Buffer.from(first.data);
  else {
    if (!first.header.object) return undefined;
    const stored = await readObject(replicator, first.header.object);
    if (!stored) return undefined;
    image = Buffer.from(stored);
    if (createHash('sha256').update(image).digest('hex') !== first.header.sha256) return undefined;
  }
  let sha256 = first.header.sha256;
  for (const { header, data } of deltas) {
    if (header.kind !== 'delta' || header.prev !== sha256 || header.pageSize <= 0) return undefined;
    try {
      image = applyDelta(image, data, header.pageSize, header.bytes / header.pageSize);
    } catch {
      return undefined;
    }
    sha256 = header.sha256;
  }
  return image;
}

/** A whole copy in the object store with its metadata (how replicas were stored before the replica stream). */
async function fetchStoredObject(
  replicator: Replicator,
  agentId: string,
  path: string,
  wanted?: string,
): Promise<FetchedReplica | undefined> {
  const store = await replicator.objects();
  const info = await store.info(placementKey(agentId));
  if (!info || info.deleted) return undefined;
  const metadata = info.metadata ?? {};
  const listed = { turnId: metadata.turnId ?? '', bytes: info.size, ends: parseEnds(metadata.ends) };
  if (wanted && metadata.sha256 !== wanted) return { ...listed, damaged: false, changed: true };
  const data = await readObject(replicator, placementKey(agentId));
  if (!data) return undefined;
  const fetched = { ...listed, bytes: data.length };
  const sha256 = createHash('sha256').update(data).digest('hex');
  if (metadata.sha256 && sha256 !== metadata.sha256) return { ...fetched, damaged: true };
  writeFileSync(path, data, { flag: 'wx', mode: 0o600 });
  return { ...fetched, damaged: false, ...(metadata.sha256 ? { sha256 } : {}) };
}

/**
 * An object's bytes; a read that stalls for {@link STALL_MS} fails (a copy deleted while it is read loses its
 * chunks, and the client would wait for them forever), and the adoption is tried again.
 */
async function readObject(replicator: Replicator, name: string): Promise<Uint8Array | null> {
  const store = await replicator.objects();
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      store.getBlob(name),
      new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new Error(`reading the replica ${name} stalled for ${STALL_MS} ms`)), STALL_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function parseEnds(text: string | undefined): CarriedEnd[] {
  if (!text) return [];
  try {
    return validEnds(JSON.parse(text));
  } catch {
    return [];
  }
}

function validEnds(list: unknown): CarriedEnd[] {
  if (!Array.isArray(list)) return [];
  return list.filter(
    (entry): entry is CarriedEnd =>
      typeof entry === 'object' &&
      entry !== null &&
      typeof (entry as CarriedEnd).id === 'string' &&
      typeof (entry as CarriedEnd).data === 'string',
  );
}
