/**
 * What a consolidation run asks the agent's model and how its answer is read (docs/memory.md,
 * "Consolidation"). The answer is untrusted: every proposed operation is checked on its own, and one
 * that fails is refused (recorded in the changelog with the reason), never partly applied:
 *
 * - `op` is `merge` (2 to {@link MAX_MERGE} ids, one new text), `update` (one id, a new text) or
 *   `forget` (one id);
 * - every id is one the run offered: a live, unpinned memory of this agent's own file (another agent's
 *   memories live in another file, so they are never offered), and no id is used by two operations;
 * - texts are strings of at most the memory length (the service's check refuses credential values);
 * - at most {@link maxOperations} operations are read (twice the memories offered); the rest are refused
 *   together, in one changelog row.
 */
import { MAX_MEMORY_CHARS, type Memory } from './memory-store.js';

export const MAX_MERGE = 20;
/** How much of a refused proposal the changelog keeps. */
export const MAX_DETAIL_CHARS = 2_000;
const MAX_REASON_CHARS = 500;

export const CONSOLIDATION_SYSTEM = [
  'You maintain the long-term memory of an AI agent. You get some of its memories as JSON ({id, kind, text, created_at}).',
  'Find duplicates (the same fact said more than once) and facts a newer memory contradicts or supersedes.',
  'Answer with JSON only: {"operations": [...]} where each operation is one of',
  '{"op": "merge", "ids": [id, ...], "text": "the one memory that replaces them", "reason": "..."},',
  '{"op": "update", "id": id, "text": "the corrected memory", "reason": "..."},',
  '{"op": "forget", "id": id, "reason": "..."}.',
  'Use only the ids given, each at most once. Keep every fact that still holds; change nothing you are unsure of. No change: {"operations": []}.',
].join(' ');

export function consolidationPrompt(memories: readonly Memory[]): string {
  const items = memories.map((m) => ({
    id: m.id,
    kind: m.kind,
    text: m.text,
    created_at: new Date(m.created_at).toISOString(),
  }));
  return `The memories (the newest, then older ones):\n${JSON.stringify(items, null, 1)}`;
}

export type PlannedOp =
  | { op: 'merge'; ids: number[]; text: string; reason: string }
  | { op: 'update'; id: number; text: string; reason: string }
  | { op: 'forget'; id: number; reason: string };

export interface Refusal {
  /** The ids the proposal named (integers only). */
  ids: number[];
  why: string;
  proposal: string;
}

export interface Plan {
  ops: PlannedOp[];
  refused: Refusal[];
}

/** Each offered memory can be in one operation at most; twice that bounds what is even read. */
export const maxOperations = (offered: number) => 2 * offered;

/** The JSON object of an answer: the whole text, or the first `{` to the last `}` (a fenced block). */
function parseAnswer(text: string): unknown {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) throw new Error('the answer holds no JSON object');
  return JSON.parse(text.slice(start, end + 1)) as unknown;
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);
const isId = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;

/** Reads and checks the model's answer against the memories the run offered. Throws when nothing is readable. */
export function readPlan(answer: string, offered: readonly Memory[]): Plan {
  const parsed = parseAnswer(answer);
  const list =
    typeof parsed === 'object' && parsed !== null ? (parsed as { operations?: unknown }).operations : undefined;
  if (!Array.isArray(list)) throw new Error('the answer has no "operations" array');
  const offeredIds = new Set(offered.map((m) => m.id));
  const used = new Set<number>();
  const plan: Plan = { ops: [], refused: [] };
  const limit = maxOperations(offered.length);
  for (const [index, raw] of list.entries()) {
    if (index >= limit) {
      // One row for all of them: the changelog stays as bounded as the answer's reading.
      plan.refused.push({
        ids: [],
        why: `more than ${limit} operations proposed: ${list.length - limit} ignored`,
        proposal: clip(JSON.stringify(list.slice(limit)), MAX_DETAIL_CHARS),
      });
      break;
    }
    const proposal = clip(JSON.stringify(raw) ?? String(raw), MAX_DETAIL_CHARS);
    const item = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const named = [...(Array.isArray(item.ids) ? item.ids : []), item.id].filter(isId).slice(0, MAX_MERGE + 1);
    const refuse = (why: string) => void plan.refused.push({ ids: [...new Set(named)], why, proposal });
    const reason = typeof item.reason === 'string' ? clip(item.reason.trim(), MAX_REASON_CHARS) : '';
    const ids = item.op === 'merge' ? item.ids : [item.id];
    if (item.op !== 'merge' && item.op !== 'update' && item.op !== 'forget') {
      refuse('unknown op (merge, update or forget)');
      continue;
    }
    if (!Array.isArray(ids) || !ids.every(isId)) {
      refuse('ids must be positive integers');
      continue;
    }
    if (item.op === 'merge' && (ids.length < 2 || ids.length > MAX_MERGE || new Set(ids).size !== ids.length)) {
      refuse(`a merge names 2 to ${MAX_MERGE} different ids`);
      continue;
    }
    const unknown = ids.filter((id) => !offeredIds.has(id));
    if (unknown.length > 0) {
      refuse(`not a live unpinned memory offered to this run: ${unknown.join(', ')}`);
      continue;
    }
    const twice = ids.filter((id) => used.has(id));
    if (twice.length > 0) {
      refuse(`already changed by an earlier operation of this run: ${twice.join(', ')}`);
      continue;
    }
    if (
      item.op !== 'forget' &&
      (typeof item.text !== 'string' || item.text.trim() === '' || item.text.length > MAX_MEMORY_CHARS)
    ) {
      refuse(`text must be 1 to ${MAX_MEMORY_CHARS} characters`);
      continue;
    }
    for (const id of ids) used.add(id);
    if (item.op === 'merge') plan.ops.push({ op: 'merge', ids, text: (item.text as string).trim(), reason });
    else if (item.op === 'update')
      plan.ops.push({ op: 'update', id: ids[0]!, text: (item.text as string).trim(), reason });
    else plan.ops.push({ op: 'forget', id: ids[0]!, reason });
  }
  return plan;
}
