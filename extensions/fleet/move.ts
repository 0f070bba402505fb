/**
 * A planned move (`POST /fleet/move`, `agt fleet move`), run from any daemon; each step runs as the owner on
 * the daemon it concerns, through the fleet's request/reply. When both the daemon that runs the agent and the
 * target replicate agent files, the holder hands the agent off (handoff.ts: unloaded, its closed file stored
 * as its final copy on the replica stream, its placement given back only then) and the target takes it over
 * (that copy restored into its data directory and loaded): no shared file system. Otherwise the agent is
 * unloaded on the holder (its running turn gets the usual grace, everything it committed is in its file, and
 * its placement is given back), then loaded from the same file path on the target, which must reach that path
 * (a shared folder). Either way, when the target cannot load it, it is loaded back where it was.
 */
import { AgtError, type RelayedAnswer } from '@agt/contracts';
import { daemonDraining } from './errors.js';
import type { PlacementRecord } from './placement.js';
import type { Relay } from './relay.js';
import { failure, json, parsed } from './relayed-json.js';

const replicates = (status: Record<string, unknown>) =>
  (status.replication as { enabled?: unknown } | undefined)?.enabled === true;

/** The answer of `request` on `daemon`, or a 503 answer when the daemon does not answer. */
async function answerOf(relay: Relay, daemon: string, request: ReturnType<typeof json>): Promise<RelayedAnswer> {
  try {
    return await relay.toDaemon(daemon, request);
  } catch (error) {
    const coded = error instanceof AgtError ? error : new AgtError('unavailable', String(error));
    const body = Buffer.from(JSON.stringify({ error: coded.message, code: coded.code })).toString('base64');
    return { statusCode: coded.statusCode, headers: { 'content-type': 'application/json' }, body };
  }
}

export async function moveAgent(relay: Relay, reference: string, target: string) {
  const holder = await relay.holderOf(reference);
  if (!holder) throw new AgtError('not_found', `no daemon of the fleet runs "${reference}"`);
  if (holder.daemon === target) return { agentId: holder.agentId, from: holder.daemon, to: target, moved: false };
  if (!holder.filePath) throw new AgtError('conflict', `the placement of ${holder.agentId} does not say its file`);
  // The target must answer before the agent stops anywhere.
  const ready = await relay.toDaemon(target, json('GET', '/fleet'));
  if (ready.statusCode !== 200 || parsed(ready).connected !== true)
    throw new AgtError('unavailable', `daemon ${target} is not in the fleet now`);
  if (parsed(ready).draining === true) throw daemonDraining(holder.agentId, target, []);
  const from = await relay.toDaemon(holder.daemon, json('GET', '/fleet'));
  const viaReplica = replicates(parsed(ready)) && from.statusCode === 200 && replicates(parsed(from));
  const moved = { agentId: holder.agentId, from: holder.daemon, to: target, moved: true };
  let loaded: RelayedAnswer;
  if (viaReplica) {
    const handed = await relay.toDaemon(holder.daemon, json('POST', '/fleet/handoff', { agent: holder.agentId }));
    if (handed.statusCode !== 200) throw failure(handed, `handing off on ${holder.daemon}`);
    loaded = await answerOf(
      relay,
      target,
      json('POST', '/fleet/takeover', { agentId: holder.agentId, sha256: parsed(handed).sha256 }),
    );
    if (loaded.statusCode === 200)
      return { ...moved, via: 'replica' as const, filePath: String(parsed(loaded).filePath) };
  } else {
    const unloaded = await relay.toDaemon(
      holder.daemon,
      json('POST', `/agents/${encodeURIComponent(holder.agentId)}/unload`),
    );
    if (unloaded.statusCode !== 200) throw failure(unloaded, `unloading on ${holder.daemon}`);
    loaded = await answerOf(relay, target, json('POST', '/agents/load', { filePath: holder.filePath }));
    if (loaded.statusCode === 200) return { ...moved, via: 'path' as const, filePath: holder.filePath };
  }
  const back = await answerOf(relay, holder.daemon, json('POST', '/agents/load', { filePath: holder.filePath }));
  const error = failure(loaded, `loading on ${target}`);
  error.details!.restored = back.statusCode === 200;
  throw error;
}

/**
 * Moves every agent `daemon` runs to the daemons `to`, one at a time, each to the target that runs the fewest
 * agents then (so they spread evenly). An agent that cannot move stays where it was (or is loaded back) and
 * is listed with why.
 */
export async function drainDaemon(
  relay: Relay,
  records: readonly PlacementRecord[],
  daemon: string,
  to: readonly string[],
) {
  const targets = to.filter((name) => name !== daemon);
  if (targets.length === 0) throw new AgtError('bad_request', 'name at least one other daemon to move the agents to');
  const load = new Map(targets.map((name) => [name, records.filter((record) => record.daemon === name).length]));
  const moved: Array<{ agentId: string; to: string }> = [];
  const failed: Array<{ agentId: string; error: string; code: string }> = [];
  for (const record of records.filter((entry) => entry.daemon === daemon)) {
    const target = [...load.entries()].sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))[0]![0];
    try {
      await moveAgent(relay, record.agentId, target);
      moved.push({ agentId: record.agentId, to: target });
      load.set(target, load.get(target)! + 1);
    } catch (error) {
      const coded = error instanceof AgtError ? error : new AgtError('unavailable', String(error));
      failed.push({ agentId: record.agentId, error: coded.message, code: coded.code });
    }
  }
  return { daemon, moved, failed };
}
