/**
 * Events: a live tail of `/events`, filtered by agent and type. Pause freezes the list at its cursor
 * while frames keep arriving; Resume goes on from that cursor with what came meanwhile. A dropped
 * connection resumes from the last cursor (`Last-Event-ID`, stream.tsx).
 */
import { useState } from 'preact/hooks';
import type { UmbilicalEvent } from './api.js';
import { events, streamState } from './stream.js';
import { time, useEvents } from './util.js';

const MAX = 300;

export function EventsView() {
  const [rows, setRows] = useState<Array<{ cursor: number; event: UmbilicalEvent }>>([]);
  const [pausedAt, setPausedAt] = useState<number | null>(null);
  const [agent, setAgent] = useState('');
  const [type, setType] = useState('');
  useEvents((event, cursor) => setRows((all) => [...all.slice(-(MAX - 1)), { cursor, event }]), []);
  const visible = pausedAt === null ? rows : rows.filter((row) => row.cursor <= pausedAt);
  const waiting = rows.length - visible.length;
  const shown = visible.filter(({ event }) => (!agent || (event.agent_id ?? '').includes(agent)) && (!type || event.event_type.startsWith(type)));
  return (
    <section aria-labelledby="events-title">
      <h1 id="events-title">Events</h1>
      <div class="row">
        <label for="filter-agent">Agent</label>
        <input id="filter-agent" value={agent} onInput={(e) => setAgent((e.currentTarget as HTMLInputElement).value)} />
        <label for="filter-type">Type</label>
        <input id="filter-type" value={type} placeholder="turn." onInput={(e) => setType((e.currentTarget as HTMLInputElement).value)} />
        <button type="button" aria-pressed={pausedAt !== null} onClick={() => setPausedAt(pausedAt === null ? (rows[rows.length - 1]?.cursor ?? 0) : null)}>{pausedAt === null ? 'Pause' : `Resume from cursor ${pausedAt} (${waiting} new)`}</button>
        <button type="button" onClick={() => events.drop()}>Reconnect</button>
      </div>
      <p class="muted" aria-live="polite">Stream: <span id="stream-state">{streamState.value}</span>, connections: <span id="stream-connects">{events.connects.value}</span></p>
      <table class="events">
        <caption class="sr-only">Events, newest last</caption>
        <thead><tr><th scope="col">Cursor</th><th scope="col">Time</th><th scope="col">Type</th><th scope="col">Agent</th><th scope="col">Payload</th></tr></thead>
        <tbody>
          {shown.map(({ cursor, event }) => (
            <tr key={cursor} class="event-row">
              <td>{cursor}</td><td>{time(event.timestamp)}</td><td>{event.event_type}</td><td>{event.agent_id ?? '—'}</td>
              <td><details><summary>payload</summary><pre tabIndex={0}>{JSON.stringify(event.payload, null, 2)}</pre></details></td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
