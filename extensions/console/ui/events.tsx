/**
 * Events: what the daemon still holds of its stream (the backlog, read on opening) then a live tail of
 * `/events`, agents by name, filtered by agent (name or id) and type. Pause freezes the list at its
 * cursor while frames keep arriving; Resume goes on from that cursor with what came meanwhile. A dropped
 * connection resumes from the last cursor (`Last-Event-ID`, stream.tsx).
 */
import { useEffect, useState } from 'preact/hooks';
import { client, type UmbilicalEvent } from './api.js';
import { backlog, events, streamState } from './stream.js';
import { errorText, time, useEvents, useLive } from './util.js';

const MAX = 300;
type Row = { cursor: number; event: UmbilicalEvent };
const merge = (a: Row[], b: Row[]) =>
  [...new Map([...a, ...b].map((row) => [row.cursor, row])).values()].sort((x, y) => x.cursor - y.cursor).slice(-MAX);

/** One line of a payload: its short string fields, the rest behind the details. */
const digest = (payload: unknown) =>
  payload && typeof payload === 'object'
    ? Object.entries(payload)
        .filter(([, v]) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
        .map(([k, v]) => `${k}: ${String(v).slice(0, 80)}`)
        .join(' · ')
    : String(payload ?? '');

export function EventsView() {
  const [rows, setRows] = useState<Row[]>([]);
  const [pausedAt, setPausedAt] = useState<number | null>(null);
  const [agent, setAgent] = useState('');
  const [type, setType] = useState('');
  const [error, setError] = useState('');
  const { data: agents } = useLive(
    () => client.agents(),
    (t) => t === 'agent.loaded' || t === 'agent.unloaded',
  );
  const names = new Map((agents ?? []).map((a) => [a.id, a.name]));
  useEffect(
    () =>
      void backlog(MAX).then(
        (old) => setRows((all) => merge(old, all)),
        (e) => setError(`Backlog: ${errorText(e)}`),
      ),
    [],
  );
  useEvents((event, cursor) => setRows((all) => merge(all, [{ cursor, event }])), []);
  const visible = pausedAt === null ? rows : rows.filter((row) => row.cursor <= pausedAt);
  const waiting = rows.length - visible.length;
  const needle = agent.trim().toLowerCase();
  const shown = visible.filter(
    ({ event }) =>
      (!needle ||
        (event.agent_id ?? '').toLowerCase().includes(needle) ||
        (names.get(event.agent_id ?? '') ?? '').toLowerCase().includes(needle)) &&
      (!type || event.event_type.startsWith(type)),
  );
  return (
    <section aria-labelledby="events-title">
      <h1 id="events-title">Events</h1>
      <div class="toolbar">
        <label for="filter-agent">Agent</label>
        <input
          id="filter-agent"
          value={agent}
          placeholder="name or id"
          onInput={(e) => setAgent((e.currentTarget as HTMLInputElement).value)}
        />
        <label for="filter-type">Type</label>
        <input
          id="filter-type"
          value={type}
          placeholder="turn."
          onInput={(e) => setType((e.currentTarget as HTMLInputElement).value)}
        />
        <button
          type="button"
          aria-pressed={pausedAt !== null}
          onClick={() => setPausedAt(pausedAt === null ? (rows[rows.length - 1]?.cursor ?? 0) : null)}
        >
          {pausedAt === null ? 'Pause' : `Resume from cursor ${pausedAt} (${waiting} new)`}
        </button>
        <button type="button" onClick={() => events.drop()}>
          Reconnect
        </button>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <p class="muted" aria-live="polite">
        Stream: <span id="stream-state">{streamState.value}</span>, connections:{' '}
        <span id="stream-connects">{events.connects.value}</span>, {shown.length} of {rows.length} shown
      </p>
      <div class="table-wrap">
        <table class="events fixed stacked">
          <caption class="sr-only">Events, newest last</caption>
          <colgroup>
            <col class="c-cursor" />
            <col class="c-time" />
            <col class="c-type" />
            <col class="c-agent" />
            <col />
          </colgroup>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Time</th>
              <th scope="col">Type</th>
              <th scope="col">Agent</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {shown.map(({ cursor, event }) => (
              <tr key={cursor} class="event-row">
                <td>{cursor}</td>
                <td>{time(event.timestamp)}</td>
                <td>
                  <code>{event.event_type}</code>
                </td>
                <td>
                  {event.agent_id ? (
                    <a href={`#/agent/${encodeURIComponent(event.agent_id)}`} title={event.agent_id}>
                      {names.get(event.agent_id) ?? event.agent_id}
                    </a>
                  ) : (
                    <span class="muted">daemon</span>
                  )}
                </td>
                <td>
                  <details>
                    <summary>{digest(event.payload) || 'payload'}</summary>
                    <pre tabIndex={0}>{JSON.stringify(event.payload, null, 2)}</pre>
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {shown.length === 0 && <p class="muted row">No event yet{rows.length ? ' matches' : ''}.</p>}
      </div>
    </section>
  );
}
