/**
 * What compaction keeps as memories instead of losing it (docs/memory.md): the summary itself (kind
 * `summary`), and one `episode` per summarized turn: what was asked (the user or trigger rows) and what
 * the agent answered last, clipped to a memory's length. Tool results stay out (they are long, and what
 * mattered of them is in the answer and the summary).
 */
import type { LoopRow } from '../agents/stores/loop-store.js';
import { MAX_MEMORY_CHARS, type MemoryKind } from './memory-store.js';

export interface CapturedMemory {
  text: string;
  kind: MemoryKind;
  turnId: string | null;
  rowId: number;
}

const rowText = (content: unknown): string => {
  if (typeof content === 'string') return content;
  const text = (content as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? text : '';
};

const clip = (text: string) => (text.length > MAX_MEMORY_CHARS ? `${text.slice(0, MAX_MEMORY_CHARS - 1)}…` : text);

export function compactionMemories(rows: readonly LoopRow[], summary: string, summaryRowId: number): CapturedMemory[] {
  const turns = new Map<string, { asked: string[]; answer: string; lastRow: number }>();
  for (const row of rows) {
    if (row.kind === 'summary' || !row.turn_id) continue;
    const turn =
      turns.get(row.turn_id) ?? turns.set(row.turn_id, { asked: [], answer: '', lastRow: row.id }).get(row.turn_id)!;
    turn.lastRow = row.id;
    const text = rowText(row.content).trim();
    if (!text) continue;
    if (row.role === 'user') turn.asked.push(text);
    else if (row.role === 'assistant') turn.answer = text;
  }
  const out: CapturedMemory[] = [];
  for (const [turnId, turn] of turns) {
    if (turn.asked.length === 0 && !turn.answer) continue;
    const text = [
      turn.asked.length ? `Asked: ${turn.asked.join('\n')}` : '',
      turn.answer ? `Answered: ${turn.answer}` : '',
    ]
      .filter(Boolean)
      .join('\n');
    out.push({ text: clip(text), kind: 'episode', turnId, rowId: turn.lastRow });
  }
  out.push({ text: clip(summary), kind: 'summary', turnId: null, rowId: summaryRowId });
  return out;
}
