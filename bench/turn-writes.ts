/**
 * The agent-file writes of one chat turn, alone, in-process: the CPU a turn's commits cost, without the
 * HTTP, the model call or the event stream around them (the part of bench/turn-rate.ts's "daemon CPU per
 * turn" that libsql takes). Two write plans of the same rows alternate in the same minutes:
 * - `six`: the daemon's plan: accept, start (+ user row), ledger row, assistant row, end marked, row
 *   deleted once streamed: six commits;
 * - `five`: the end committed with the assistant row (tried and reverted: fdea983, 247751f).
 * Prints CPU µs per turn for each plan and round (process.cpuUsage: user + system, the WAL's pwrite calls
 * included). Result on 27 Nov 2026 (load 8): 120–190 µs per turn for either plan, no difference beyond the
 * noise; a commit alone is ~10–15 µs (BEGIN IMMEDIATE + INSERT + COMMIT against ~9–13 µs autocommit).
 *
 * Run: node --import tsx bench/turn-writes.ts [--turns=2000] [--rounds=4]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentFile } from '../kernel/agents/agent-file.js';
import type { Sql } from '../kernel/agents/sql.js';
import { agentConfig } from '../test/helpers/agent-file.js';

const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const turns = Number(flag('turns')) || 2000;
const rounds = Number(flag('rounds')) || 4;
const dir = mkdtempSync(join(tmpdir(), 'agt-turn-writes-'));
const file = AgentFile.create(join(dir, 'bench.agt'), agentConfig({ name: 'bench' }));
const sql = (file as unknown as { sql: Sql }).sql;
let seq = 0;

const ledger = (turnId: string) =>
  sql.run(
    'INSERT INTO agt_usage (at, loop, turn_id, purpose, provider, model, input, output, cache_read, cache_write, cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    Date.now(),
    'main',
    turnId,
    'turn',
    'fake',
    'fake-model',
    120,
    3,
    0,
    0,
    null,
  );
const end = (turnId: string) =>
  JSON.stringify({
    type: 'turn.completed',
    payload: { turn_id: turnId, absorbed_turn_ids: [], text: 'ok', llm_calls: 1, tool_calls: 0, stop_reason: 'stop' },
    loop: 'main',
    turnId,
  });
const userRow = (turnId: string) => ({
  loop: 'main',
  role: 'user' as const,
  kind: 'message' as const,
  turnId,
  content: { text: 'hello', chat_turn_id: turnId },
});
const answerRow = (turnId: string) => ({
  loop: 'main',
  role: 'assistant' as const,
  kind: 'message' as const,
  turnId,
  content: { text: 'ok' },
  model: 'fake-model',
  provider: 'fake',
  usage: { input: 120, output: 3 },
});

/** The old transaction: BEGIN/COMMIT through exec (parsed each time). */
function oldTx<T>(fn: () => T): T {
  sql.exec('BEGIN IMMEDIATE');
  const result = fn();
  sql.exec('COMMIT');
  return result;
}

function six(turnId: string): void {
  oldTx(() => file.queue.insert({ turnId, loop: 'main', kind: 'chat', payload: { text: 'hello' } }));
  oldTx(() => {
    file.queue.markRunning(turnId);
    file.loop.append(userRow(turnId));
  });
  ledger(turnId);
  file.loop.append(answerRow(turnId));
  oldTx(() => sql.run('UPDATE agt_queue SET ended = ? WHERE turn_id = ?', end(turnId), turnId));
  oldTx(() => sql.run('DELETE FROM agt_queue WHERE turn_id = ?', turnId));
}

function five(turnId: string): void {
  file.transaction(() => file.queue.insert({ turnId, loop: 'main', kind: 'chat', payload: { text: 'hello' } }));
  file.transaction(() => {
    file.queue.markRunning(turnId);
    file.loop.append(userRow(turnId));
  });
  ledger(turnId);
  file.transaction(() => {
    file.loop.append(answerRow(turnId));
    sql.run('UPDATE agt_queue SET ended = ? WHERE turn_id = ?', end(turnId), turnId);
  });
  sql.run('DELETE FROM agt_queue WHERE turn_id = ?', turnId);
}

function measure(plan: (turnId: string) => void): number {
  const before = process.cpuUsage();
  for (let i = 0; i < turns; i++) plan(`turn-${seq++}`);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / turns;
}

try {
  measure(five); // warm up: statements prepared, pages cached
  for (let round = 0; round < rounds; round++) {
    const results = { six: measure(six), five: measure(five) };
    console.log(
      JSON.stringify({ round, cpuUsPerTurn: { six: Math.round(results.six), five: Math.round(results.five) } }),
    );
  }
} finally {
  file.close();
  rmSync(dir, { recursive: true, force: true });
}
