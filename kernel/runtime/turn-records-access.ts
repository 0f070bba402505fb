/**
 * `ctx.agents.turns.records` (contracts/agent-turns.ts `TurnRecordsAccess`): extensions' records beside an
 * agent's turns, in the agent's file (`agt_turn_records`). Kinds and sizes are checked here so a caller's
 * mistake is a `bad_request`, never a file that grows without bound.
 */
import { AgtError, type TurnRecord, type TurnRecordsAccess } from '@agt/contracts';
import type { AgentFile } from '../agents/agent-file.js';
import { TURN_RECORD_MAX_BYTES, type TurnRecordRow } from '../agents/stores/turn-records-store.js';

const KIND = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const TURN_ID_MAX = 200;

function checked(kind: string, turnId?: string): void {
  if (!KIND.test(kind)) throw new AgtError('bad_request', `turn record kind must match ${KIND.source}`);
  if (turnId !== undefined && (turnId === '' || turnId.length > TURN_ID_MAX))
    throw new AgtError('bad_request', `turn ids are 1 to ${TURN_ID_MAX} characters`);
}

const parsed = (row: TurnRecordRow): TurnRecord => ({
  turnId: row.turnId,
  record: JSON.parse(row.record) as unknown,
  seq: row.seq,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

/** `fileOf` throws `not_found` for an agent that is not loaded. */
export function turnRecordsAccess(fileOf: (agentId: string) => AgentFile): TurnRecordsAccess {
  return {
    put(agentId, kind, turnId, record) {
      checked(kind, turnId);
      const json = JSON.stringify(record);
      if (json === undefined) throw new AgtError('bad_request', 'a turn record must be JSON');
      if (Buffer.byteLength(json) > TURN_RECORD_MAX_BYTES)
        throw new AgtError('bad_request', `a turn record is at most ${TURN_RECORD_MAX_BYTES} bytes of JSON`);
      fileOf(agentId).turnRecords.put(kind, turnId, json, Date.now());
    },
    get(agentId, kind, turnId) {
      checked(kind, turnId);
      const row = fileOf(agentId).turnRecords.get(kind, turnId);
      return row ? parsed(row) : undefined;
    },
    list(agentId, kind, options = {}) {
      checked(kind);
      const limit = Math.min(500, Math.max(1, Math.trunc(options.limit ?? 50)));
      return fileOf(agentId).turnRecords.list(kind, limit, options.before).map(parsed);
    },
  };
}
