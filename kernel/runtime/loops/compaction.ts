/**
 * Compaction: summarize a loop's older history with the loop's own model and replace it by one
 * `system`/`summary` row, so later turns carry the gist instead of every row.
 *
 * - The newest {@link KEEP_RECENT_TURNS} turns stay verbatim (a turn starts at a user row that follows
 *   a non-user row: a chat, a trigger, a `loop_send`; chats absorbed into a turn stay with it). Every
 *   older row, an earlier summary included, is summarized.
 * - The loop is held busy while it runs ({@link LoopExecutor.hold}): chats and triggers that arrive
 *   meanwhile queue and run after it, in order. 409 when a turn runs, a compaction already runs, the
 *   loop is disabled, or nothing is older than the kept turns (or only an earlier summary is).
 * - The model sees one user message holding a plain-text transcript (each row clipped to
 *   {@link MAX_ROW_CHARS}, the transcript to the newest {@link MAX_TRANSCRIPT_CHARS}) and no tools.
 *   Any failure of that call, or an empty answer, is 502 `upstream_error` and nothing changes; no
 *   provider for the model is 503 `unavailable` (as for a turn).
 * - The swap is one transaction: the summarized rows are deleted and the summary row takes the id (and
 *   `created_at`) of the newest summarized row, so it sits exactly where they were. It carries the
 *   call's model, provider, usage and cost (so `GET usage` counts it). Then `llm.completed` and
 *   `loop.compacted` `{removed, summary_chars, memories}` are emitted.
 * - In the same transaction, the summary and one episode per summarized turn are saved as memories
 *   (kernel/memory/capture.ts), so what leaves the context stays searchable and can be recalled.
 */
import { AgtError, type ModelResponse } from '@agt/contracts';
import type { LoopRow } from '../../agents/stores/loop-store.js';
import type { AgentRuntime } from '../agent-runtime.js';
import {
  emptySummary,
  historyChangedDuringCompaction,
  nothingToCompact,
  summarizationFailed,
  unloadedDuringCompaction,
} from '../errors.js';
import { rowText } from '../executor/context.js';
import { compactionMemories } from '../../memory/capture.js';
import type { Memory } from '../../memory/memory-store.js';

export const KEEP_RECENT_TURNS = 3;
export const MAX_ROW_CHARS = 4_000;
export const MAX_TRANSCRIPT_CHARS = 200_000;
/** The summarization call is abandoned (502) after this long; providers have their own timeouts too. */
export const COMPACT_TIMEOUT_MS = 120_000;

export const SUMMARY_SYSTEM = [
  'You compact the conversation history of one cognition loop of an AI agent. Write a summary the agent can carry on from without the original rows:',
  'facts learned, decisions made, open tasks and commitments, names, numbers, file paths, and tool results that still matter.',
  'Be concise; use short paragraphs or bullets; do not address anyone and do not invent anything.',
].join(' ');

export interface CompactResult {
  loop: string;
  removed: number;
  kept: number;
  summaryRowId: number;
  summaryChars: number;
}

/** Index of the first row kept verbatim (0: nothing older than the kept turns). */
export function compactionCut(rows: LoopRow[], keepTurns = KEEP_RECENT_TURNS): number {
  let starts = 0;
  for (let i = rows.length - 1; i >= 0; i--) {
    if (rows[i]!.role === 'user' && (i === 0 || rows[i - 1]!.role !== 'user')) {
      starts++;
      if (starts === keepTurns) return i;
    }
  }
  return 0;
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}… [clipped]` : text);

function rowLine(row: LoopRow): string {
  const content = (typeof row.content === 'object' && row.content !== null ? row.content : {}) as Record<
    string,
    unknown
  >;
  let label: string = row.role;
  let text = rowText(row.content);
  if (row.role === 'user' && row.kind === 'trigger') label = 'trigger';
  if (row.role === 'system') label = row.kind === 'summary' ? 'summary of earlier history' : 'notice';
  if (row.role === 'tool')
    label =
      `tool result ${typeof content.name === 'string' ? content.name : ''}${content.isError === true ? ' (error)' : ''}`.trim();
  if (row.role === 'assistant' && Array.isArray(content.toolCalls)) {
    const calls = (content.toolCalls as Array<{ name?: unknown; args?: unknown }>).map(
      (call) => `${String(call.name)}(${JSON.stringify(call.args ?? {})})`,
    );
    text = `${text}${text ? ' ' : ''}[calls ${calls.join(', ')}]`;
  }
  return `[${label}] ${clip(text, MAX_ROW_CHARS)}`;
}

/** The plain-text transcript the model summarizes (newest rows win when it is too long). */
export function transcript(rows: LoopRow[]): string {
  const lines = rows.map(rowLine);
  let total = 0;
  let first = lines.length;
  while (first > 0 && total + lines[first - 1]!.length + 1 <= MAX_TRANSCRIPT_CHARS) total += lines[--first]!.length + 1;
  const omitted = first > 0 ? [`[${first} earlier rows omitted]`] : [];
  return [...omitted, ...lines.slice(first)].join('\n');
}

/** Compacts one loop of a running agent (the route and the `loop_compact` tool). */
export async function compactLoop(runtime: AgentRuntime, loop: string): Promise<CompactResult> {
  const executor = runtime.loop(loop); // 404 unknown, 409 disabled
  return executor.hold('compaction', async () => {
    const file = runtime.agent.file;
    const rows = file.loop.list(loop);
    const cut = compactionCut(rows);
    const older = rows.slice(0, cut);
    if (older.length === 0 || (older.length === 1 && older[0]!.kind === 'summary')) {
      throw nothingToCompact(loop, KEEP_RECENT_TURNS);
    }
    const { client, settings } = await runtime.modelFor(loop);
    const startedAt = Date.now();
    let response: ModelResponse;
    try {
      response = await client.complete({
        agentId: runtime.id,
        loop,
        purpose: 'compaction',
        model: settings,
        system: SUMMARY_SYSTEM,
        messages: [
          { role: 'user', content: `Summarize this conversation history (oldest first):\n\n${transcript(older)}` },
        ],
        tools: [],
        signal: AbortSignal.timeout(COMPACT_TIMEOUT_MS),
      });
    } catch (error) {
      // A budget the summary would pass is the owner's limit, not a provider failure: said as it is (429).
      if (error instanceof AgtError && error.code === 'budget_exceeded') throw error;
      const status = error instanceof AgtError ? error.details?.upstreamStatus : undefined;
      throw summarizationFailed(loop, error, status);
    }
    const summary = typeof response.text === 'string' ? response.text.trim() : '';
    if (!summary) throw emptySummary(loop);
    if (!file.isOpen) throw unloadedDuringCompaction(runtime.agent.name);

    const last = older.at(-1)!;
    const usage = response.usage;
    // What is summarized away stays searchable as memories (docs/memory.md); a text holding a credential
    // value is left out, never stored.
    const memory = runtime.memory;
    const secrets = memory ? await memory.secretsOf(runtime.agent) : [];
    if (!file.isOpen) throw unloadedDuringCompaction(runtime.agent.name);
    const captured = memory
      ? compactionMemories(older, summary, last.id).flatMap((m) => {
          try {
            return [{ ...m, text: memory.check(m.text, secrets), source: 'compaction' as const, loop }];
          } catch {
            return [];
          }
        })
      : [];
    let memories: Memory[] = [];
    const removed = file.transaction(() => {
      if (!file.loop.get(last.id)) throw historyChangedDuringCompaction(loop);
      const count = file.loop.deleteThrough(loop, last.id);
      file.loop.insertSummary({
        id: last.id,
        loop,
        content: { text: summary, compacted_rows: count, through_row_id: last.id, compacted_at: Date.now() },
        model: response.model ?? null,
        provider: response.provider ?? null,
        usage: usage ?? null,
        cost: response.cost ?? null,
        createdAt: last.created_at,
      });
      if (memory) memories = memory.saveChecked(runtime.agent, captured);
      return count;
    });
    memory?.announce(runtime.agent, memories);
    if (usage) {
      runtime.emit(
        'llm.completed',
        {
          provider: response.provider,
          model: response.model,
          usage,
          cost: response.cost ?? null,
          duration_ms: Math.max(0, Date.now() - startedAt),
          stop_reason: response.stopReason,
        },
        { loop },
      );
    }
    runtime.emit(
      'loop.compacted',
      { removed, summary_chars: summary.length, memories: memories.map((m) => m.id) },
      { loop },
    );
    return { loop, removed, kept: rows.length - cut, summaryRowId: last.id, summaryChars: summary.length };
  });
}
