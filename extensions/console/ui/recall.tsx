/**
 * The memories recalled for a turn, shown in the chat after the owner's message that started it: from the
 * agent's `memory.recalled` events (what the daemon still holds of its stream, then the live ones), which
 * name the memories by id; their texts are read when the note is opened (`GET /agents/{id}/memory`).
 */
import { signal } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import { client, type MemoryItem } from './api.js';
import { backlog, events } from './stream.js';
import { errorText } from './util.js';

export interface Recall {
  ids: number[];
  tokens: number;
  mode: string;
}

/**
 * Recalls by agent, then by turn id, for the page's life: an agent's backlog is read once (at its first
 * view), the live events feed every agent's, so going back to an agent opens no second stream.
 */
const recalls = new Map<string, Map<string, Recall>>();
const backlogRead = new Set<string>();
const changes = signal(0);
function note(agentId: string | null | undefined, turnId: string | null | undefined, payload: any): void {
  if (!agentId || !turnId || !Array.isArray(payload?.memory_ids) || payload.memory_ids.length === 0) return;
  const turns = recalls.get(agentId) ?? new Map<string, Recall>();
  recalls.set(
    agentId,
    turns.set(turnId, {
      ids: payload.memory_ids,
      tokens: Number(payload.tokens ?? 0),
      mode: String(payload.mode ?? ''),
    }),
  );
  changes.value++;
}
events.on((event) => {
  if (event.event_type === 'memory.recalled') note(event.agent_id, event.turn_id, event.payload);
});

/** The recalls of the agent's turns, by turn id (the component re-renders as they come). */
export function useRecalls(id: string): Map<string, Recall> {
  useEffect(() => {
    if (backlogRead.has(id)) return;
    backlogRead.add(id);
    backlog(2000, id).then(
      (rows) => {
        for (const { event } of rows)
          if (event.event_type === 'memory.recalled') note(event.agent_id, event.turn_id, event.payload);
      },
      () => backlogRead.delete(id),
    );
  }, [id]);
  void changes.value;
  return recalls.get(id) ?? new Map();
}

export function RecallNote({ agentId, recall }: { agentId: string; recall: Recall }) {
  const [memories, setMemories] = useState<MemoryItem[] | null>(null);
  const [error, setError] = useState('');
  const open = (event: Event) => {
    if ((event.currentTarget as HTMLDetailsElement).open && !memories)
      client.memories(agentId).then(
        (r) => setMemories(r.memories),
        (e) => setError(errorText(e)),
      );
  };
  const n = recall.ids.length;
  return (
    <li class="recall">
      <details onToggle={open}>
        <summary>
          Recalled {n} {n === 1 ? 'memory' : 'memories'} ({recall.ids.map((i) => `#${i}`).join(', ')}; {recall.tokens}{' '}
          tokens, {recall.mode === 'hybrid' ? 'words and meaning' : 'words only'})
        </summary>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        {memories && (
          <ul>
            {recall.ids.map((i) => (
              <li key={i}>
                #{i} {memories.find((m) => m.id === i)?.text ?? <span class="muted">(no longer kept)</span>}
              </li>
            ))}
          </ul>
        )}
      </details>
    </li>
  );
}
