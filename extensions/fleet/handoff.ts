/**
 * A planned move without a shared file system (docs/fleet.md, "Planned moves"): the two steps `POST /fleet/move`
 * runs when the fleet replicates agent files. On the daemon that runs the agent, {@link Handoffs.handOff}
 * keeps the agent's placement through its unload (its running turn gets the usual grace; everything it
 * committed is in its file, which the kernel checkpoints and closes), waits for the replica upload under way to
 * end, stores the closed file as the agent's final copy (the replica's object and metadata, with the turn ends
 * not yet on the fleet stream), and only then gives the placement back: no daemon can claim the agent, nor
 * adopt it from an older copy, before the final copy is stored. When a step after the unload fails, the agent
 * is loaded back from its file here (the placement never left). On the target, {@link Handoffs.takeOver}
 * restores that copy (restore.ts: checked, placed in its data directory, loaded, which claims the placement).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { AgtError, type ExtensionContext, type LocalRequests } from '@agt/contracts';
import { notRunHere, replicationOff } from './errors.js';
import type { FleetEvents } from './events.js';
import { placementKey } from './keys.js';
import type { PlacementKeeper } from './placement.js';
import type { Replicator } from './replicas.js';
import { failure, json } from './relayed-json.js';
import { restoreReplica } from './restore.js';

/** What the first 16 bytes of an SQLite database say. */
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
/** Where the database header keeps `PRAGMA user_version` (the agent file's schema version), big-endian. */
const USER_VERSION_OFFSET = 60;

export interface HandedOff {
  agentId: string;
  /** SHA-256 of the final copy, hex: the target restores exactly this copy. */
  sha256: string;
  bytes: number;
  schemaVersion: number;
  /** Turn ends the copy carries (not yet on the fleet stream when it was stored). */
  ends: number;
}

export class Handoffs {
  constructor(
    private readonly ctx: Pick<ExtensionContext, 'agents' | 'requests' | 'settings' | 'logger'>,
    private readonly placement: PlacementKeeper,
    private readonly replicator: Replicator | undefined,
    private readonly events: FleetEvents,
    private readonly daemon: string,
  ) {}

  /** The holder's step: the agent stops here and its closed file becomes its final copy on the replica stream. */
  async handOff(reference: string): Promise<HandedOff> {
    const replicator = this.replicator;
    if (!replicator) throw replicationOff(this.daemon);
    const requests = this.requests();
    const agent = this.ctx.agents.find(reference);
    if (!agent?.filePath) throw notRunHere(reference, this.daemon);
    const { id: agentId, filePath } = agent;
    // The last turn id stored (the copy's `turnId` is informative: restore.ts logs it).
    const turnId = replicator.status().agents.find((entry) => entry.agentId === agentId)?.turnId ?? null;
    this.placement.keepThroughUnload(agentId);
    try {
      // Queued chats and a turn waiting for the owner stay in the file: they run on the target.
      const unloaded = await requests.dispatch(json('POST', `/agents/${encodeURIComponent(agentId)}/unload?keep=true`));
      if (unloaded.statusCode !== 200) throw failure(unloaded, `unloading ${agentId}`);
      // An upload begun before the unload would land over the final copy: it ends first.
      await replicator.idle(agentId);
      const stored = await this.storeClosedFile(replicator, agentId, filePath, turnId);
      await this.placement.handedOff(agentId, true);
      this.ctx.logger.info(
        { agentId, bytes: stored.bytes, ends: stored.ends },
        'fleet: agent handed off (its final copy is stored)',
      );
      return stored;
    } catch (error) {
      throw await this.loadBack(requests, agentId, filePath, error);
    }
  }

  /** The target's step: restores the agent's final copy (`sha256`: exactly that one) and loads it here. */
  async takeOver(agentId: string, sha256?: string): Promise<{ agentId: string; filePath: string; bytes: number }> {
    const replicator = this.replicator;
    if (!replicator) throw replicationOff(this.daemon);
    const restored = await restoreReplica(
      replicator,
      this.requests(),
      this.ctx.settings.dataDir,
      agentId,
      (ends) => {
        for (const end of ends) this.events.publishCarried(end);
      },
      sha256,
    );
    if (!restored) throw new AgtError('not_found', `the fleet holds no copy of agent ${agentId}`);
    if (restored.status !== 200 || !restored.filePath)
      throw new AgtError(
        restored.code ?? 'conflict',
        `agent ${agentId} could not be restored on daemon ${this.daemon} (${restored.code ?? `status ${restored.status}`})`,
        { status: restored.status === 200 ? 409 : restored.status, details: { agentId, daemon: this.daemon } },
      );
    return { agentId, filePath: restored.filePath, bytes: restored.bytes ?? 0 };
  }

  private requests(): LocalRequests {
    if (!this.ctx.requests) throw new AgtError('unavailable', 'this daemon cannot run requests as its owner');
    return this.ctx.requests;
  }

  /**
   * A step failed: an agent still loaded keeps its placement; an unloaded one is loaded back from its file
   * (the placement, still held, stays with it). Returns the error to throw, saying `restored` after an unload.
   */
  private async loadBack(requests: LocalRequests, agentId: string, filePath: string, error: unknown) {
    const coded = error instanceof AgtError ? error : new AgtError('unavailable', String(error));
    if (this.ctx.agents.find(agentId)?.id === agentId) {
      await this.placement.handedOff(agentId, false);
      return coded;
    }
    const back = await requests.dispatch(json('POST', '/agents/load', { filePath })).catch(() => undefined);
    const restored = back?.statusCode === 200;
    await this.placement.handedOff(agentId, !restored);
    this.ctx.logger.warn(
      { agentId, err: coded, restored },
      'fleet: an agent could not be handed off; it was loaded back here',
    );
    return new AgtError(coded.code, coded.message, {
      status: coded.statusCode,
      details: { ...coded.details, restored },
    });
  }

  /**
   * Stores the closed agent file as the agent's newest copy (a base on the replica stream, replicas.ts), copied
   * first into this daemon's data directory so that what is hashed is what is sent.
   */
  private async storeClosedFile(
    replicator: Replicator,
    agentId: string,
    filePath: string,
    turnId: string | null,
  ): Promise<HandedOff> {
    // The kernel checkpoints the WAL when it closes the file: the `.agt` alone is the agent. A WAL left with
    // frames (another connection held the file open) would hold committed work the copy misses.
    const wal = statSync(`${filePath}-wal`, { throwIfNoEntry: false });
    if (wal && wal.size > 0)
      throw new AgtError('conflict', `the file of agent ${agentId} was closed with a write-ahead log left beside it`);
    const folder = join(this.ctx.settings.dataDir, 'fleet-agents');
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const copy = join(folder, `.${placementKey(agentId)}-${randomBytes(6).toString('hex')}.handoff`);
    try {
      const hash = createHash('sha256');
      let bytes = 0;
      const source = createReadStream(filePath);
      source.on('data', (chunk: string | Buffer) => {
        hash.update(chunk);
        bytes += chunk.length;
      });
      await pipeline(source, createWriteStream(copy, { flags: 'wx', mode: 0o600 }));
      const sha256 = hash.digest('hex');
      const header = Buffer.alloc(100);
      const handle = await open(copy, 'r');
      try {
        await handle.read(header, 0, header.length, 0);
      } finally {
        await handle.close();
      }
      if (!header.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC))
        throw new AgtError('conflict', `the file of agent ${agentId} is not an SQLite database`);
      const schemaVersion = header.readUInt32BE(USER_VERSION_OFFSET);
      // Still this daemon's: a placement lost meanwhile (NATS out of reach too long) may be another's now,
      // whose copies this one must not replace.
      if (!this.placement.heldAgents().some((record) => record.agentId === agentId))
        throw new AgtError(
          'unavailable',
          `daemon ${this.daemon} lost the placement of agent ${agentId} during its handoff`,
        );
      // Read after the file closed: no end of this agent is queued after this list.
      const ends = this.events.pendingEnds(agentId);
      await replicator.storeClosed({ agentId, path: copy, sha256, bytes, schemaVersion }, turnId, ends);
      return { agentId, sha256, bytes, schemaVersion, ends: ends.length };
    } finally {
      rmSync(copy, { force: true });
    }
  }
}
