/**
 * How a copy of an agent file is stored on its subject of the replica stream (docs/fleet.md, "Replication";
 * replica-log.ts): a copy made as pages goes as the pages changed since the copy stored before it while that
 * copy is known and the deltas since the last base stay smaller than the file, else whole (a base); a copy
 * made as a file (a large one, or a planned move's closed file) goes whole; a whole copy larger than one
 * message goes to the object store, named by its base.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { AgentPageImage, AgentSnapshot, Logger } from '@agt/contracts';
import type { ObjectStore } from '@nats-io/obj';
import { placementKey } from './keys.js';
import type { ReplicaHeader, ReplicaLog } from './replica-log.js';
import { encodeDelta, pageDigests } from './replica-pages.js';

/** A copy in the object store is sent in chunks of this size (NATS's default message limit is 1 MB). */
const CHUNK_BYTES = 512 * 1024;

/** What the agent's subject holds, as this daemon stored it (reset when a store fails: the next is a base). */
export interface ChainState {
  /** SHA-256 of the stored copy. */
  sha256: string | null;
  /** Its page digests and page size (a copy made as pages), its subject's last sequence, delta bytes since its base. */
  digests: Buffer | undefined;
  pageSize: number;
  seq: number | undefined;
  chainBytes: number;
  /** The object-store copy the stored base names, if it is one. */
  object?: string;
}

export interface StoredCopy {
  /** Bytes sent. */
  bytes: number;
  /** Sent as the pages changed since the copy before (else whole). */
  delta: boolean;
}

export class ReplicaWriter {
  constructor(
    private readonly log: ReplicaLog,
    private readonly objects: () => Promise<ObjectStore>,
    private readonly daemon: string,
    private readonly logger: Logger,
  ) {}

  /** The header of a whole copy (a base) of `copy`. */
  header(
    copy: Pick<AgentSnapshot, 'agentId' | 'sha256' | 'bytes' | 'schemaVersion'>,
    turnId: string | null,
    ends: Array<{ id: string; data: string }>,
  ): ReplicaHeader {
    return {
      kind: 'base',
      agentId: copy.agentId,
      schemaVersion: copy.schemaVersion,
      turnId: turnId ?? '',
      sha256: copy.sha256,
      bytes: copy.bytes,
      pageSize: 0,
      daemon: this.daemon,
      at: Date.now(),
      ends,
    };
  }

  /** Stores a copy made as pages: a delta after the stored copy when it can, else whole. */
  async pages(state: ChainState, image: AgentPageImage, header: ReplicaHeader): Promise<StoredCopy> {
    const maxBody = await this.log.maxBody(header);
    const { data, pageSize } = image;
    const digests = pageDigests(data, pageSize);
    if (state.digests && state.seq !== undefined && state.pageSize === pageSize && state.sha256) {
      const delta = encodeDelta(data, pageSize, digests, state.digests);
      if (delta.length <= maxBody && state.chainBytes + delta.length <= data.length) {
        const next = { ...header, kind: 'delta' as const, pageSize, prev: state.sha256 };
        state.seq = await this.log.append(next, delta, state.seq);
        Object.assign(state, { digests, chainBytes: state.chainBytes + delta.length });
        return { bytes: delta.length, delta: true };
      }
    }
    if (data.length <= maxBody) state.seq = await this.log.append({ ...header, kind: 'base', pageSize }, data);
    else state.seq = await this.object(state, { ...header, pageSize }, blob(data));
    Object.assign(state, { digests, pageSize, chainBytes: 0 });
    return { bytes: data.length, delta: false };
  }

  /** Stores a copy made as a file, whole: no delta follows it. */
  async file(
    state: ChainState,
    copy: Pick<AgentSnapshot, 'path' | 'bytes'>,
    header: ReplicaHeader,
  ): Promise<StoredCopy> {
    const maxBody = await this.log.maxBody(header);
    state.seq =
      copy.bytes <= maxBody
        ? await this.log.append(header, await readFile(copy.path))
        : await this.object(state, header, Readable.toWeb(createReadStream(copy.path)) as ReadableStream<Uint8Array>);
    Object.assign(state, { digests: undefined, pageSize: 0, chainBytes: 0 });
    return { bytes: copy.bytes, delta: false };
  }

  /**
   * A copy larger than a message: whole in the object store, under a name of its own (a copy replaced in place
   * would no longer match the base that names it, were the daemon to die in between), then a base on the
   * stream that names it; the object the previous base named is deleted once nothing names it.
   */
  private async object(state: ChainState, header: ReplicaHeader, data: ReadableStream<Uint8Array>) {
    const { agentId } = header;
    const store = await this.objects();
    const object = `${placementKey(agentId)}.${randomBytes(6).toString('hex')}`;
    await store.put(
      {
        name: object,
        options: { max_chunk_size: CHUNK_BYTES },
        metadata: { agentId, sha256: header.sha256, bytes: String(header.bytes), daemon: this.daemon },
      },
      data,
    );
    const seq = await this.log.append({ ...header, kind: 'object', object }, new Uint8Array(0));
    const previous = state.object;
    state.object = object;
    if (previous)
      void store.delete(previous).catch((error: unknown) => {
        this.logger.debug({ err: error, agentId }, 'fleet: an earlier copy could not be deleted from the object store');
      });
    return seq;
  }
}

/** A copy made in memory, as the one-chunk stream the object store reads. */
function blob(data: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(data);
      controller.close();
    },
  });
}
