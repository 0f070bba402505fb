/**
 * Eval cases from what an agent really did (docs/evals.md, "Capturing"): each captured turn becomes a case
 * with its input, the conversation before it (as the model saw it), the tool calls with their recorded
 * results and the answer, plus starting assertions (the same tools called, an answer close to the
 * recorded one) for the owner to edit.
 */
import type { LoopRow } from '../agents/stores/loop-store.js';
import { rowText } from '../runtime/executor/context.js';
import type { Assertion, EvalCase, RecordedTool } from './suite.js';

/** The conversation before a captured turn keeps at most this many messages. */
const HISTORY_MESSAGES = 20;
/** Captured answers must stay this close (word-set similarity) to the recorded one. */
const CAPTURED_SIMILARITY = 0.8;

export interface CaptureOptions {
  /** The newest N turns (default 1). */
  turns?: number;
  /** Only turns that began at or after this time (ms). */
  since?: number;
}

interface TurnRows {
  turnId: string;
  rows: LoopRow[];
  firstIndex: number;
}

function toolCallsOf(row: LoopRow): Array<{ id: string; name: string; args: unknown }> {
  const calls = (row.content as { toolCalls?: unknown } | null)?.toolCalls;
  if (!Array.isArray(calls)) return [];
  return calls.filter((call): call is { id: string; name: string; args: unknown } => typeof call?.name === 'string');
}

function recordedTools(rows: LoopRow[]): RecordedTool[] {
  const results = new Map<string, { content: string; isError?: boolean }>();
  for (const row of rows) {
    const content = row.content as { toolCallId?: unknown; text?: unknown; isError?: unknown } | null;
    if (row.role !== 'tool' || typeof content?.toolCallId !== 'string') continue;
    results.set(content.toolCallId, {
      content: typeof content.text === 'string' ? content.text : rowText(row.content),
      ...(content.isError === true ? { isError: true } : {}),
    });
  }
  const tools: RecordedTool[] = [];
  for (const row of rows) {
    if (row.role !== 'assistant') continue;
    for (const call of toolCallsOf(row)) {
      const result = results.get(call.id);
      if (result) tools.push({ name: call.name, args: call.args ?? {}, result });
    }
  }
  return tools;
}

/** The turns of one loop that began with a message from the owner or a sender, oldest first. */
function turnsOf(rows: LoopRow[]): TurnRows[] {
  const turns = new Map<string, TurnRows>();
  rows.forEach((row, index) => {
    if (!row.turn_id) return;
    const turn = turns.get(row.turn_id);
    if (turn) turn.rows.push(row);
    else turns.set(row.turn_id, { turnId: row.turn_id, rows: [row], firstIndex: index });
  });
  return [...turns.values()].filter((turn) => turn.rows[0]?.role === 'user' && turn.rows[0].kind === 'message');
}

function startingAssertions(tools: RecordedTool[], answer: string | null): Assertion[] {
  const assertions: Assertion[] = [...new Set(tools.map((tool) => tool.name))].map((tool) => ({ tool }));
  if (tools.length === 0) assertions.push({ maxToolCalls: 0 });
  if (answer) assertions.push({ similar: { min: CAPTURED_SIMILARITY } });
  return assertions;
}

/** Cases from the newest turns of an agent's loop rows (`rows`: the whole loop, oldest first). */
export function captureCases(
  agent: { id: string; name: string },
  rows: LoopRow[],
  options: CaptureOptions = {},
): EvalCase[] {
  const since = options.since ?? 0;
  const turns = turnsOf(rows)
    .filter((turn) => turn.rows[0]!.created_at >= since)
    .slice(-(options.turns ?? 1));
  return turns.map((turn, n) => {
    const input = rowText(turn.rows[0]!.content);
    const history = rows
      .slice(0, turn.firstIndex)
      .filter((row) => (row.role === 'user' || row.role === 'assistant') && row.kind === 'message')
      .slice(-HISTORY_MESSAGES)
      .map((row) => ({ role: row.role as 'user' | 'assistant', text: rowText(row.content) }));
    const tools = recordedTools(turn.rows);
    const final = [...turn.rows].reverse().find((row) => row.role === 'assistant' && row.kind === 'message');
    const answer = final ? rowText(final.content) : null;
    const cost = turn.rows.reduce<number | null>((sum, row) => (row.cost === null ? sum : (sum ?? 0) + row.cost), null);
    return {
      name: `${agent.name} turn ${n + 1}: ${input.slice(0, 60)}`,
      input,
      ...(history.length > 0 ? { history } : {}),
      recorded: {
        tools,
        answer,
        modelCalls: turn.rows.filter((row) => row.role === 'assistant' || row.kind === 'model_invoke').length,
        cost,
        source: {
          agentId: agent.id,
          agentName: agent.name,
          turnId: turn.turnId,
          at: new Date(turn.rows[0]!.created_at).toISOString(),
        },
      },
      assert: startingAssertions(tools, answer),
    };
  });
}
