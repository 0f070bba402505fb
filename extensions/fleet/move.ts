/**
 * A planned move (`POST /fleet/move`, `agt fleet move`): the agent is unloaded on the daemon that runs it
 * (its running turn gets the usual grace, everything it committed is in its file, and its placement is given
 * back), then loaded from the same file path on the target daemon, which must reach that path (a shared
 * folder). When the target cannot load it, it is loaded back where it was. Both steps run as the owner on
 * each daemon, through the fleet's request/reply.
 */
import { AgtError, type RelayedAnswer, type RelayedRequest } from '@agt/contracts';
import { daemonDraining } from './errors.js';
import type { PlacementRecord } from './placement.js';
import type { Relay } from './relay.js';

function json(method: string, url: string, body?: unknown): RelayedRequest {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body === undefined) return { method, url, headers };
  headers['content-type'] = 'application/json';
  return { method, url, headers, body: Buffer.from(JSON.stringify(body)).toString('base64') };
}

function parsed(answer: RelayedAnswer): Record<string, unknown> {
  try {
    return JSON.parse(Buffer.from(answer.body, 'base64').toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** An answer that is not 2xx, as the error it carries (same status and code). */
function failure(answer: RelayedAnswer, step: string): AgtError {
  const body = parsed(answer);
  return new AgtError(
    typeof body.code === 'string' ? body.code : 'conflict',
    `${step}: ${typeof body.error === 'string' ? body.error : `status ${answer.statusCode}`}`,
    { status: answer.statusCode, details: { step } },
  );
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
  const unloaded = await relay.toDaemon(
    holder.daemon,
    json('POST', `/agents/${encodeURIComponent(holder.agentId)}/unload`),
  );
  if (unloaded.statusCode !== 200) throw failure(unloaded, `unloading on ${holder.daemon}`);
  const loaded = await relay.toDaemon(target, json('POST', '/agents/load', { filePath: holder.filePath }));
  if (loaded.statusCode === 200)
    return { agentId: holder.agentId, from: holder.daemon, to: target, moved: true, filePath: holder.filePath };
  const back = await relay.toDaemon(holder.daemon, json('POST', '/agents/load', { filePath: holder.filePath }));
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
