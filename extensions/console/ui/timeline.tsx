/**
 * A turn's timeline: a waterfall of its model calls, tool calls and waits for the owner, built from the
 * agent's events (what the daemon still holds of its stream, then the live ones): a local trace view.
 * Model calls span `duration_ms` before their `llm.completed`; tool calls run from `tool.started` to
 * `tool.completed`; an owner wait from `hil.requested` to `hil.resolved`; the memories recalled before the
 * turn (`memory.recalled`) as a step of their own.
 */
import { useEffect, useState } from 'preact/hooks';
import type { UmbilicalEvent } from './api.js';
import { backlog } from './stream.js';
import { errorText, time, useEvents } from './util.js';

interface Span {
  key: string;
  kind: 'model' | 'tool' | 'owner' | 'memory';
  label: string;
  start: number;
  end: number | null;
  detail: string;
}
interface Turn {
  id: string;
  start: number;
  end: number | null;
  spans: Span[];
}

function turnsOf(events: UmbilicalEvent[]): Turn[] {
  const turns = new Map<string, Turn>();
  const open = new Map<string, Span>();
  for (const event of events) {
    const id = event.turn_id;
    if (!id) continue;
    const turn = turns.get(id) ?? { id, start: event.timestamp, end: null, spans: [] };
    turns.set(id, turn);
    const p = event.payload as any;
    switch (event.event_type) {
      case 'turn.started':
        turn.start = event.timestamp;
        break;
      case 'turn.completed':
        turn.end = event.timestamp;
        break;
      case 'llm.completed':
        turn.spans.push({
          key: `m${event.seq}`,
          kind: 'model',
          label: `${p.provider}/${p.model}`,
          start: event.timestamp - Number(p.duration_ms ?? 0),
          end: event.timestamp,
          detail: `${p.usage?.input ?? 0} in, ${p.usage?.output ?? 0} out`,
        });
        break;
      case 'tool.started': {
        const span: Span = {
          key: `t${p.call_id}`,
          kind: 'tool',
          label: String(p.tool),
          start: event.timestamp,
          end: null,
          detail: '',
        };
        open.set(`t${p.call_id}`, span);
        turn.spans.push(span);
        break;
      }
      case 'tool.completed': {
        const span = open.get(`t${p.call_id}`);
        if (span) Object.assign(span, { end: event.timestamp, detail: p.ok ? 'ok' : 'failed' });
        break;
      }
      case 'memory.recalled': {
        // Recall runs before the turn's first model call; the model cites these as [memory N].
        const ids: number[] = Array.isArray(p.memory_ids) ? p.memory_ids : [];
        const label = `recalled ${ids.length} ${ids.length === 1 ? 'memory' : 'memories'} ${ids.map((n) => `#${n}`).join(', ')}`;
        const detail = `${p.tokens} tokens, ${p.mode === 'hybrid' ? 'words and meaning' : 'words only'}`;
        turn.spans.push({
          key: `r${event.seq}`,
          kind: 'memory',
          label,
          start: event.timestamp,
          end: event.timestamp,
          detail,
        });
        break;
      }
      case 'hil.requested': {
        const span: Span = {
          key: `h${p.taskId ?? p.requestId}`,
          kind: 'owner',
          label: `waits for the owner (${p.kind})`,
          start: event.timestamp,
          end: null,
          detail: '',
        };
        open.set(`h${p.taskId ?? p.requestId}`, span);
        turn.spans.push(span);
        break;
      }
      case 'hil.resolved': {
        const span = open.get(`h${p.id}`);
        if (span) Object.assign(span, { end: event.timestamp, detail: String(p.resolution ?? '') });
        break;
      }
    }
  }
  return [...turns.values()]
    .filter((turn) => turn.spans.length > 0 || turn.end !== null)
    .sort((a, b) => b.start - a.start);
}

const ms = (n: number) => (n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(2)} s`);

export function Timeline({ id }: { id: string }) {
  const [events, setEvents] = useState<UmbilicalEvent[]>([]);
  const [error, setError] = useState('');
  const [chosen, setChosen] = useState('');
  useEffect(() => {
    setEvents([]);
    backlog(2000, id).then(
      (rows) =>
        setEvents((live) => [
          ...rows.map((r) => r.event),
          ...live.filter((e) => !rows.some((r) => r.event.seq === e.seq)),
        ]),
      (e) => setError(errorText(e)),
    );
  }, [id]);
  useEvents(
    (event) => {
      if (event.agent_id === id) setEvents((all) => [...all, event]);
    },
    [id],
  );
  const turns = turnsOf(events);
  const turn = turns.find((t) => t.id === chosen) ?? turns[0];
  if (error)
    return (
      <p role="alert" class="error">
        {error}
      </p>
    );
  if (!turn) return <p class="muted">No turn in the daemon's recent events yet.</p>;
  const now = Date.now();
  const end = Math.max(turn.end ?? now, ...turn.spans.map((s) => s.end ?? now));
  const total = Math.max(1, end - turn.start);
  return (
    <div class="timeline">
      <div class="row">
        <label for="timeline-turn">Turn</label>
        <select
          id="timeline-turn"
          value={turn.id}
          onChange={(e) => setChosen((e.currentTarget as HTMLSelectElement).value)}
        >
          {turns.map((t) => (
            <option key={t.id} value={t.id}>
              {time(t.start)} · {t.spans.length} steps{t.end === null ? ' · running' : ''}
            </option>
          ))}
        </select>
        <span class="muted">{turn.end === null ? 'running' : ms(turn.end - turn.start)}</span>
      </div>
      <ol class="waterfall" aria-label="Steps of the turn">
        {turn.spans.map((span) => {
          const left = ((span.start - turn.start) / total) * 100;
          const width = Math.max(0.5, (((span.end ?? now) - span.start) / total) * 100);
          return (
            <li key={span.key} class={`span span-${span.kind}`}>
              <span class="span-label">
                {span.kind === 'tool' ? <code>{span.label}</code> : span.label}
                <span class="muted">
                  {span.kind === 'memory' ? '' : ` · ${span.end === null ? 'open' : ms(span.end - span.start)}`}
                  {span.detail ? ` · ${span.detail}` : ''}
                </span>
              </span>
              <span class="track" aria-hidden="true">
                <span class="bar" style={{ left: `${left}%`, width: `${Math.min(width, 100 - left)}%` }} />
              </span>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
