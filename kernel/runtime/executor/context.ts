/**
 * The model's view of a loop: `agt_loop` rows → provider-neutral messages, and the row shapes the
 * runtime writes. Row content (JSON) by kind:
 *
 * | role      | kind        | content                                   |
 * |-----------|-------------|-------------------------------------------|
 * | user      | message     | `{text, chat_turn_id}` (a chat)           |
 * | user      | trigger     | `{text, trigger, events, count}`          |
 * | assistant | message     | `{text, reasoning?}`                      |
 * | assistant | tool_call   | `{text, toolCalls: [{id, name, args}], reasoning?}` |
 * | tool      | tool_result | `{toolCallId, name, text, isError, images?}` |
 * | system    | notice      | `{text}` (abort notices, suspensions)     |
 * | system    | summary     | `{text}` (compaction)                     |
 *
 * `reasoning` holds the provider's opaque reasoning blocks (Anthropic `thinking` / `redacted_thinking`
 * with their signatures), stored unchanged so the next call can send them back with the assistant
 * message (Anthropic refuses a tool-use continuation without them when thinking is on). They are never
 * text: `GET chat` does not show them.
 *
 * Reading is lenient: rows written by other parts of the daemon with other shapes become text.
 */
import type { LoopRow } from '../../agents/stores/loop-store.js';
import type { ConversationEntry, ModelMessage, ReasoningBlock, ToolCall, ToolImage } from '@agt/contracts';

const MAX_TRIGGER_TEXT = 8_000;

type Json = Record<string, unknown>;
const asObject = (value: unknown): Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};

/** The text of any row content. */
export function rowText(content: unknown): string {
  if (typeof content === 'string') return content;
  const text = asObject(content).text;
  if (typeof text === 'string') return text;
  return content === null || content === undefined ? '' : JSON.stringify(content);
}

function toolCallsOf(content: unknown): ToolCall[] {
  const calls = asObject(content).toolCalls;
  if (!Array.isArray(calls)) return [];
  return calls
    .map(asObject)
    .filter((c) => typeof c.id === 'string' && typeof c.name === 'string')
    .map((c) => ({ id: c.id as string, name: c.name as string, args: asObject(c.args) }));
}

/** The well-formed reasoning blocks of an assistant row, unchanged (signatures included). */
export function reasoningOf(content: unknown): ReasoningBlock[] {
  const blocks = asObject(content).reasoning;
  if (!Array.isArray(blocks)) return [];
  const out: ReasoningBlock[] = [];
  for (const raw of blocks) {
    const b = asObject(raw);
    if (b.type === 'thinking' && typeof b.thinking === 'string' && typeof b.signature === 'string') {
      out.push({ type: 'thinking', thinking: b.thinking, signature: b.signature });
    } else if (b.type === 'redacted_thinking' && typeof b.data === 'string') {
      out.push({ type: 'redacted_thinking', data: b.data });
    }
  }
  return out;
}

/** Images stored with a tool result (`{mimeType, data}` in base64); anything else is dropped. */
function imagesOf(value: unknown): ToolImage[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (image): image is ToolImage => typeof image?.mimeType === 'string' && typeof image?.data === 'string',
  );
}

/** One row as a model message, or null for rows the model never sees. */
export function rowToMessage(row: LoopRow): ModelMessage | null {
  const content = asObject(row.content);
  switch (row.role) {
    case 'user':
      return { role: 'user', content: rowText(row.content) };
    case 'assistant': {
      const toolCalls = toolCallsOf(row.content);
      const reasoning = reasoningOf(row.content);
      return {
        role: 'assistant',
        content: rowText(row.content),
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
        ...(reasoning.length > 0 ? { reasoning } : {}),
      };
    }
    case 'tool':
      if (typeof content.toolCallId !== 'string')
        return { role: 'user', content: `[tool output] ${rowText(row.content)}` };
      return {
        role: 'tool',
        toolCallId: content.toolCallId,
        name: typeof content.name === 'string' ? content.name : 'tool',
        content: rowText(row.content),
        ...(content.isError === true ? { isError: true } : {}),
        ...(imagesOf(content.images).length > 0 ? { images: imagesOf(content.images) } : {}),
      };
    case 'system':
      if (row.kind === 'model_invoke') return null;
      return {
        role: 'user',
        content:
          row.kind === 'summary'
            ? `[summary of the earlier conversation]\n${rowText(row.content)}`
            : `[notice] ${rowText(row.content)}`,
      };
    default:
      return null;
  }
}

/**
 * Rows → messages the providers accept: no leading tool results (the window may cut a call from its
 * result), and every assistant tool call answered before the next turn speaks (a turn cut short by an
 * interrupt or a crash may have left calls without results).
 */
export function buildMessages(rows: LoopRow[]): ModelMessage[] {
  const raw = rows.map(rowToMessage).filter((m): m is ModelMessage => m !== null);
  let start = 0;
  while (start < raw.length && raw[start]!.role === 'tool') start++;
  const out: ModelMessage[] = [];
  let open: ToolCall[] = [];
  const closeOpen = () => {
    for (const call of open)
      out.push({
        role: 'tool',
        toolCallId: call.id,
        name: call.name,
        content: 'No result: the turn ended before this call ran.',
        isError: true,
      });
    open = [];
  };
  for (const message of raw.slice(start)) {
    if (message.role === 'tool') {
      const index = open.findIndex((c) => c.id === message.toolCallId);
      if (index < 0) continue; // a result whose call is gone: providers refuse orphans
      open.splice(index, 1);
      out.push(message);
      continue;
    }
    closeOpen();
    out.push(message);
    if (message.role === 'assistant' && message.toolCalls) open = [...message.toolCalls];
  }
  closeOpen();
  return out;
}

/**
 * The tool calls of a turn's last assistant tool-call row that no later row of the turn answers, in
 * call order (`rows`: the turn's rows, oldest first). Empty when the turn's last call round is complete.
 */
export function unansweredCalls(rows: LoopRow[]): ToolCall[] {
  let last = -1;
  for (let i = rows.length - 1; i >= 0; i--) {
    if (rows[i]!.role === 'assistant' && rows[i]!.kind === 'tool_call') {
      last = i;
      break;
    }
  }
  if (last < 0) return [];
  const answered = new Set(
    rows
      .slice(last + 1)
      .filter((row) => row.role === 'tool')
      .map((row) => asObject(row.content).toolCallId),
  );
  return toolCallsOf(rows[last]!.content).filter((call) => !answered.has(call.id));
}

/** The user-row text of a trigger wake. */
export function triggerText(trigger: string, events: unknown[], count: number): string {
  const body = JSON.stringify(events.length === 1 ? events[0] : { events, count });
  const clipped = body.length > MAX_TRIGGER_TEXT ? `${body.slice(0, MAX_TRIGGER_TEXT)}… [truncated]` : body;
  return `[trigger ${trigger}${count > 1 ? `, ${count} events` : ''}] ${clipped}`;
}

/** A conversation row (what extensions read through `ctx.agents.turns.history`) with its tool-call links. */
export interface HistoryEntry extends ConversationEntry {
  toolCalls?: ToolCall[];
  toolCallId?: string;
}

/**
 * Chat history for `GET /agents/{id}/chat`: rows as provider-neutral messages with row metadata.
 * Reasoning blocks are left out (they are opaque provider state, not conversation).
 */
export function historyMessage(row: LoopRow): HistoryEntry {
  const message = rowToMessage(row);
  const base = {
    id: row.id,
    role: row.role as string,
    kind: row.kind as string,
    content: rowText(row.content),
    turnId: row.turn_id,
    createdAt: row.created_at,
  };
  // System rows keep their own role (the model sees them as user notices).
  if (!message || row.role === 'system') return base;
  if (message.role === 'assistant') return { ...base, ...(message.toolCalls ? { toolCalls: message.toolCalls } : {}) };
  if (message.role === 'tool')
    return {
      ...base,
      toolCallId: message.toolCallId,
      name: message.name,
      ...(message.isError ? { isError: true } : {}),
    };
  return { ...base, role: message.role };
}
