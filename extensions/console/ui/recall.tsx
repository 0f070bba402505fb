/**
 * The memories recalled for a turn, shown in the chat after the owner's message that started it: from the
 * agent's `memory.recalled` events (what the daemon still holds of its stream, then the live ones), which
 * name the memories by id; their texts are read when the note is opened (`GET /agents/{id}/memory`).
 */
import { useEffect, useState } from 'preact/hooks';
import { client, type MemoryItem } from './api.js';
import { backlog } from './stream.js';
import { errorText, useEvents } from './util.js';

export interface Recall { ids: number[]; tokens: number; mode: string }

/** The recalls of the agent's turns, by turn id. */
export function useRecalls(id: string): Map<string, Recall> {
  const [recalls, setRecalls] = useState(new Map<string, Recall>());
  const add = (turnId: string | null | undefined, payload: any) => {
    if (!turnId || !Array.isArray(payload?.memory_ids) || payload.memory_ids.length === 0) return;
    setRecalls((old) => new Map(old).set(turnId, { ids: payload.memory_ids, tokens: Number(payload.tokens ?? 0), mode: String(payload.mode ?? '') }));
  };
  useEffect(() => {
    setRecalls(new Map());
    let alive = true;
    backlog(2000, id).then((rows) => {
      if (alive) for (const { event } of rows) if (event.event_type === 'memory.recalled') add(event.turn_id, event.payload);
    }, () => undefined);
    return () => void (alive = false);
  }, [id]);
  useEvents((event) => {
    if (event.agent_id === id && event.event_type === 'memory.recalled') add(event.turn_id, event.payload);
  }, [id]);
  return recalls;
}

export function RecallNote({ agentId, recall }: { agentId: string; recall: Recall }) {
  const [memories, setMemories] = useState<MemoryItem[] | null>(null);
  const [error, setError] = useState('');
  const open = (event: Event) => {
    if ((event.currentTarget as HTMLDetailsElement).open && !memories) client.memories(agentId).then((r) => setMemories(r.memories), (e) => setError(errorText(e)));
  };
  const n = recall.ids.length;
  return (
    <li class="recall">
      <details onToggle={open}>
        <summary>Recalled {n} {n === 1 ? 'memory' : 'memories'} ({recall.ids.map((i) => `#${i}`).join(', ')}; {recall.tokens} tokens, {recall.mode === 'hybrid' ? 'words and meaning' : 'words only'})</summary>
        {error && <p role="alert" class="error">{error}</p>}
        {memories && (
          <ul>
            {recall.ids.map((i) => <li key={i}>#{i} {memories.find((m) => m.id === i)?.text ?? <span class="muted">(no longer kept)</span>}</li>)}
          </ul>
        )}
      </details>
    </li>
  );
}
