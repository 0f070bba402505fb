/**
 * The agents this daemon has seen, by id, each with its key (`agent-key.ts`), kept in
 * `<dataDir>/known-agents.jsonl` (0600). Everything the daemon keeps or grants per agent (its sandbox
 * work folder and uid, the owner's per-agent settings, extensions' state, scheduled backups) is keyed by
 * the agent id, and an id is only a string a file can claim: the first key seen with an id binds it,
 * and a file that claims the id with another key is refused (409 `agent_id_conflict`; it may come in
 * `asNew`, under a fresh id). See docs/decisions.md, "An agent is its key".
 *
 * One JSON line per id seen or re-keyed, appended before the load that made it is answered (it survives
 * the daemon being killed, as review marks do); the last line of an id wins. A line cut short by a crash
 * is skipped: that id is then bound again by the next file that claims it. A file that cannot be read
 * (other than missing) refuses every load rather than forget a binding.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgtError } from '@agt/contracts';
import { sameKey, type AgentKey } from './agent-key.js';
import { agentIdConflict } from './errors.js';

export const KNOWN_AGENTS_FILE = 'known-agents.jsonl';

export class KnownAgents {
  readonly path: string;
  private table?: Map<string, AgentKey>;

  constructor(dataDir: string) {
    this.path = join(dataDir, KNOWN_AGENTS_FILE);
  }

  private load(): Map<string, AgentKey> {
    if (this.table) return this.table;
    let text = '';
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new AgtError(
          'unavailable',
          `the record of known agents (${this.path}) cannot be read: ${(error as Error).message}`,
          { cause: error },
        );
      }
    }
    const table = new Map<string, AgentKey>();
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        const entry = JSON.parse(line) as { id?: unknown; did?: unknown; sealed?: unknown };
        const nullableString = (value: unknown) => value === null || typeof value === 'string';
        if (typeof entry.id === 'string' && nullableString(entry.did) && nullableString(entry.sealed)) {
          table.set(entry.id, { did: entry.did as string | null, sealed: entry.sealed as string | null });
        }
      } catch {
        // A line cut short (the daemon killed mid-append).
      }
    }
    this.table = table;
    return table;
  }

  /** The key this daemon knows for `agentId`, if it has seen it. */
  get(agentId: string): AgentKey | undefined {
    return this.load().get(agentId);
  }

  /** 409 `agent_id_conflict` when `agentId` is known with another key than `key`. */
  check(agentId: string, key: AgentKey, filePath: string): void {
    const known = this.get(agentId);
    if (known && !sameKey(known, key)) throw agentIdConflict(agentId, filePath, known.did, key.did);
  }

  /** Binds `agentId` to `key` (first seen, or re-keyed by the owner); nothing is written when it already is. */
  remember(agentId: string, key: AgentKey): void {
    const table = this.load();
    const known = table.get(agentId);
    if (known && sameKey(known, key)) return;
    appendFileSync(this.path, `${JSON.stringify({ id: agentId, did: key.did, sealed: key.sealed })}\n`, {
      mode: 0o600,
    });
    table.set(agentId, key);
  }
}
