/**
 * Fleet: every loaded agent in one table that stays fast at 1,000 agents (only the rows in view are
 * rendered; the rest are two spacer rows): searchable by name, filtered by state, sorted by any column,
 * with state badges, last activity as relative time, an activity sparkline (events per 5 minutes over
 * the last hour, from the stream while the page is open), today's tokens and cost, what waits for the
 * owner and the errors seen; bulk start / stop; the agent files of tracked folders that are not loaded;
 * create from a template with its fields as a form. Reloaded on the stream's events, never polled.
 */
import { signal } from '@preact/signals';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { client, type AgentSummary } from './api.js';
import { events } from './stream.js';
import { errorText, useLive } from './util.js';
import { count, money, relative, StateBadge, stateWord } from './words.js';

const BUCKET_MS = 5 * 60_000;
const BUCKETS = 12;
/** Per agent: when it last did something (stream or durable row), its event times, its errors seen. */
const durableActivity = signal<Record<string, number>>({});
const lastActivity = signal<Record<string, number>>({});
const activity = new Map<string, number[]>();
const errorsSeen = signal<Record<string, number>>({});
events.on((event) => {
  const id = event.agent_id;
  if (!id) return;
  lastActivity.value = { ...lastActivity.value, [id]: event.timestamp };
  const times = activity.get(id) ?? [];
  times.push(event.timestamp);
  if (times.length > 2000) times.splice(0, times.length - 2000);
  activity.set(id, times);
  if (event.event_type === 'agent.error')
    errorsSeen.value = { ...errorsSeen.value, [id]: (errorsSeen.value[id] ?? 0) + 1 };
});

function Sparkline({ id, name }: { id: string; name: string }) {
  const now = Date.now();
  const buckets = new Array<number>(BUCKETS).fill(0);
  for (const at of activity.get(id) ?? []) {
    const index = BUCKETS - 1 - Math.floor((now - at) / BUCKET_MS);
    if (index >= 0 && index < BUCKETS) buckets[index]!++;
  }
  const max = Math.max(1, ...buckets);
  const points = buckets.map((n, i) => `${(i * 60) / (BUCKETS - 1)},${18 - (n / max) * 16}`).join(' ');
  const total = buckets.reduce((a, b) => a + b, 0);
  return (
    <svg
      class="spark"
      width="60"
      height="20"
      viewBox="0 0 60 20"
      role="img"
      aria-label={`${name}: ${total} events in the last hour`}
    >
      <polyline points={points} fill="none" stroke="currentColor" stroke-width="1.5" />
    </svg>
  );
}

const ROW = 44;
type SortKey = 'name' | 'state' | 'last' | 'tokens' | 'cost' | 'waiting' | 'errors';
const COLUMNS: Array<[SortKey | null, string, string?]> = [
  ['name', 'Agent'],
  ['state', 'State'],
  ['last', 'Last activity', 'hide-narrow'],
  [null, 'Activity', 'hide-narrow'],
  ['tokens', 'Tokens today', 'num hide-narrow'],
  ['cost', 'Cost today', 'num'],
  ['waiting', 'Waiting', 'num hide-narrow'],
  ['errors', 'Errors', 'num hide-narrow'],
];

function CreateForm() {
  const { data: templates } = useLive(
    () => client.templates(),
    () => false,
  );
  const { data: providers } = useLive(
    () => client.providers().catch(() => ({ providers: [] })) as Promise<any>,
    () => false,
  );
  const [message, setMessage] = useState('');
  const [template, setTemplate] = useState('standard');
  const chosen = templates?.templates.find((t) => t.id === template) as { description?: string } | undefined;
  const create = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    const body = {
      name: value('name'),
      template,
      ...(value('provider') ? { provider: value('provider') } : {}),
      ...(value('model') ? { model: value('model') } : {}),
      start: (form.elements.namedItem('start') as HTMLInputElement).checked,
    };
    client.create(body).then(
      (made) => (form.reset(), setMessage(`Created ${made.name}.`)),
      (e) => setMessage(errorText(e)),
    );
  };
  return (
    <form class="card" onSubmit={create} aria-labelledby="new-title">
      <h2 id="new-title">New agent</h2>
      <div class="form-grid">
        <div class="stack">
          <label for="new-name">Name</label>
          <input id="new-name" name="name" required maxLength={64} />
        </div>
        <div class="stack">
          <label for="new-template">Template</label>
          <select
            id="new-template"
            name="template"
            value={template}
            onChange={(e) => setTemplate((e.currentTarget as HTMLSelectElement).value)}
          >
            {(templates?.templates ?? [{ id: 'standard', name: 'standard' }]).map((t) => (
              <option key={t.id} value={t.id}>
                {t.name ?? t.id}
              </option>
            ))}
          </select>
        </div>
        <div class="stack">
          <label for="new-provider">Provider</label>
          <select id="new-provider" name="provider">
            <option value="">The template's</option>
            {((providers?.providers ?? []) as Array<{ id: string; name?: string }>).map((p) => (
              <option key={p.id} value={p.id}>
                {p.name ?? p.id}
              </option>
            ))}
          </select>
        </div>
        <div class="stack">
          <label for="new-model">Model</label>
          <input id="new-model" name="model" placeholder="the provider's default" />
        </div>
      </div>
      {chosen?.description && <p class="muted">{chosen.description}</p>}
      <div class="row">
        <label>
          <input type="checkbox" name="start" /> Start it now (and after a daemon restart)
        </label>
        <span class="spacer" />
        <button type="submit" class="primary">
          Create
        </button>
      </div>
      {message && <p role="status">{message}</p>}
    </form>
  );
}

export function Fleet() {
  const { data: agents, error } = useLive(
    () => client.agents(),
    (type) => /^(agent\.|turn\.|tracked\.)/.test(type),
  );
  const { data: usage } = useLive(
    () => client.usageToday(),
    (type) => type === 'llm.completed',
  );
  const { data: tasks } = useLive(
    () => client.tasks(),
    (type) => /^(hil\.|task\.|turn\.)/.test(type),
  );
  const { data: tracked } = useLive(
    () => client.tracked().catch(() => ({ agents: [] })),
    (type) => type === 'tracked.changed' || type === 'agent.loaded' || type === 'agent.unloaded',
  );
  const [query, setQuery] = useState('');
  const [stateFilter, setStateFilter] = useState('');
  const [sort, setSort] = useState<{ key: SortKey; up: boolean }>({ key: 'name', up: true });
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [message, setMessage] = useState('');
  const [scroll, setScroll] = useState({ top: 0, height: 600 });
  const box = useRef<HTMLDivElement>(null);
  const fetched = useRef(new Set<string>());

  const today = new Map((usage?.groups ?? []).map((group) => [group.key, group]));
  const waiting = new Map<string, number>();
  for (const task of tasks?.tasks ?? []) waiting.set(task.agentId, (waiting.get(task.agentId) ?? 0) + 1);
  const lastAt = (id: string) => Math.max(durableActivity.value[id] ?? 0, lastActivity.value[id] ?? 0);
  const value = (agent: AgentSummary, key: SortKey): string | number => {
    const spend = today.get(agent.id);
    switch (key) {
      case 'name':
        return agent.name.toLowerCase();
      case 'state':
        return stateWord(agent.runtimeState)[0];
      case 'last':
        return lastAt(agent.id);
      case 'tokens':
        return spend ? spend.input + spend.output : 0;
      case 'cost':
        return spend?.cost_usd ?? 0;
      case 'waiting':
        return waiting.get(agent.id) ?? 0;
      case 'errors':
        return errorsSeen.value[agent.id] ?? 0;
    }
  };
  const needle = query.trim().toLowerCase();
  const rows = useMemo(
    () =>
      (agents ?? [])
        .filter(
          (a) =>
            (!needle || a.name.toLowerCase().includes(needle) || a.id.includes(needle)) &&
            (!stateFilter || a.runtimeState === stateFilter),
        )
        .sort((a, b) => {
          const [x, y] = [value(a, sort.key), value(b, sort.key)];
          return (x < y ? -1 : x > y ? 1 : 0) * (sort.up ? 1 : -1);
        }),
    [agents, needle, stateFilter, sort, usage, tasks, lastActivity.value, durableActivity.value, errorsSeen.value],
  );

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setScroll({ top: el.scrollTop, height: el.clientHeight });
    measure();
    addEventListener('resize', measure);
    return () => removeEventListener('resize', measure);
  }, [agents !== undefined]);
  const first = Math.max(0, Math.floor(scroll.top / ROW) - 8);
  const last = Math.min(rows.length, Math.ceil((scroll.top + scroll.height) / ROW) + 8);
  const shown = rows.slice(first, last);

  // The durable last activity (the newest conversation row), fetched once per agent whose row is in
  // view once scrolling rests (so a fast scroll through 1,000 agents sends no request per row passed).
  const shownIds = shown.map((a) => a.id).join();
  useEffect(() => {
    const timer = setTimeout(() => {
      for (const id of shownIds.split(',')) {
        if (!id || fetched.current.has(id)) continue;
        fetched.current.add(id);
        client.lastRow(id).then(
          (page) => {
            const at = page.rows.at(-1)?.created_at;
            if (at !== undefined) durableActivity.value = { ...durableActivity.value, [id]: at };
          },
          () => undefined,
        );
      }
    }, 150);
    return () => clearTimeout(timer);
  }, [shownIds]);

  const states = [...new Set((agents ?? []).map((a) => a.runtimeState))].sort();
  const allShownSelected = rows.length > 0 && rows.every((a) => selected.has(a.id));
  const toggle = (id: string) =>
    setSelected((old) => {
      const next = new Set(old);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  const bulk = (action: 'start' | 'stop') => {
    const ids = rows.filter((a) => selected.has(a.id)).map((a) => a.id);
    Promise.allSettled(ids.map((id) => (action === 'start' ? client.start(id) : client.stop(id)))).then((results) => {
      const failed = results.filter((r) => r.status === 'rejected').length;
      setMessage(
        `${action === 'start' ? 'Started' : 'Stopped'} ${ids.length - failed} of ${ids.length}.${failed ? ` ${failed} refused.` : ''}`,
      );
    });
  };
  const act = (what: () => Promise<unknown>) =>
    what().then(
      () => setMessage(''),
      (e) => setMessage(errorText(e)),
    );
  const notLoaded = (tracked?.agents ?? []).filter((agent) => !agent.loaded);
  const sortBy = (key: SortKey) =>
    setSort((old) => ({ key, up: old.key === key ? !old.up : key === 'name' || key === 'state' }));

  return (
    <section aria-labelledby="fleet-title">
      <h1 id="fleet-title">Fleet</h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="toolbar">
        <label class="sr-only" for="fleet-search">
          Search agents
        </label>
        <input
          id="fleet-search"
          type="search"
          placeholder="Search by name"
          value={query}
          onInput={(e) => setQuery((e.currentTarget as HTMLInputElement).value)}
        />
        <label class="sr-only" for="fleet-state">
          State
        </label>
        <select
          id="fleet-state"
          value={stateFilter}
          onChange={(e) => setStateFilter((e.currentTarget as HTMLSelectElement).value)}
        >
          <option value="">Every state</option>
          {states.map((s) => (
            <option key={s} value={s}>
              {stateWord(s)[0]}
            </option>
          ))}
        </select>
        <span class="muted" aria-live="polite">
          {rows.length} of {agents?.length ?? 0} agents{selected.size ? `, ${selected.size} selected` : ''}
        </span>
        <span class="spacer" />
        <button type="button" disabled={!selected.size} onClick={() => bulk('start')}>
          Start selected
        </button>
        <button type="button" disabled={!selected.size} onClick={() => bulk('stop')}>
          Stop selected
        </button>
      </div>
      {message && <p role="status">{message}</p>}
      <div
        class="table-wrap vscroll"
        ref={box}
        onScroll={(e) =>
          setScroll({
            top: (e.currentTarget as HTMLDivElement).scrollTop,
            height: (e.currentTarget as HTMLDivElement).clientHeight,
          })
        }
      >
        <table class="fleet">
          <caption class="sr-only">Agents and their state</caption>
          <thead>
            <tr>
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select every agent shown"
                  checked={allShownSelected}
                  onChange={() => setSelected(allShownSelected ? new Set() : new Set(rows.map((a) => a.id)))}
                />
              </th>
              {COLUMNS.map(([key, label, cls]) => (
                <th
                  scope="col"
                  class={cls}
                  aria-sort={key && sort.key === key ? (sort.up ? 'ascending' : 'descending') : undefined}
                >
                  {key ? (
                    <button type="button" class="sort" onClick={() => sortBy(key)}>
                      {label}
                      {sort.key === key ? (sort.up ? ' ▲' : ' ▼') : ''}
                    </button>
                  ) : (
                    label
                  )}
                </th>
              ))}
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {first > 0 && <tr aria-hidden="true" style={{ height: `${first * ROW}px` }} />}
            {shown.map((agent) => {
              const spend = today.get(agent.id);
              const at = lastAt(agent.id);
              return (
                <tr key={agent.id} data-agent-id={agent.id} class={selected.has(agent.id) ? 'selected' : undefined}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Select ${agent.name}`}
                      checked={selected.has(agent.id)}
                      onChange={() => toggle(agent.id)}
                    />
                  </td>
                  <td>
                    <a class="agent-name" href={`#/agent/${encodeURIComponent(agent.id)}`}>
                      {agent.name}
                    </a>
                  </td>
                  <td>
                    <StateBadge state={agent.runtimeState} />
                  </td>
                  <td class="hide-narrow" title={at ? new Date(at).toLocaleString() : undefined}>
                    {at ? relative(at) : <span class="muted">never</span>}
                  </td>
                  <td class="hide-narrow">
                    <Sparkline id={agent.id} name={agent.name} />
                  </td>
                  <td class="num hide-narrow">{spend ? count(spend.input + spend.output) : '0'}</td>
                  <td class="num">
                    {!spend ? (
                      '$0.00'
                    ) : spend.cost_usd === null ? (
                      <span
                        class="muted"
                        title="No price for this model in the settings: tokens are counted, cost is not"
                      >
                        no price
                      </span>
                    ) : (
                      money(spend.cost_usd)
                    )}
                  </td>
                  <td class="num hide-narrow">
                    {waiting.get(agent.id) ? (
                      <a class="badge tone-wait" href="#/inbox">
                        {waiting.get(agent.id)}
                      </a>
                    ) : (
                      '0'
                    )}
                  </td>
                  <td class="num hide-narrow">
                    {errorsSeen.value[agent.id] ? (
                      <span class="badge tone-error">{errorsSeen.value[agent.id]}</span>
                    ) : (
                      '0'
                    )}
                  </td>
                  <td>
                    {agent.runtimeState === 'stopped' || agent.displayState === 'off' ? (
                      <button
                        type="button"
                        class="small"
                        onClick={() => act(() => client.start(agent.id))}
                        aria-label={`Start ${agent.name}`}
                      >
                        Start
                      </button>
                    ) : (
                      <button
                        type="button"
                        class="small"
                        onClick={() => act(() => client.stop(agent.id))}
                        aria-label={`Stop ${agent.name}`}
                      >
                        Stop
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
            {last < rows.length && <tr aria-hidden="true" style={{ height: `${(rows.length - last) * ROW}px` }} />}
          </tbody>
        </table>
        {agents && rows.length === 0 && (
          <p class="muted row">{agents.length === 0 ? 'No agent is loaded. Create one below.' : 'No agent matches.'}</p>
        )}
      </div>
      {notLoaded.length > 0 && (
        <div class="card">
          <h2>In tracked folders, not loaded</h2>
          <ul>
            {notLoaded.map((agent) => (
              <li key={agent.filePath}>
                {agent.name} <span class="muted">{agent.filePath}</span>{' '}
                <button
                  type="button"
                  class="small"
                  onClick={() => act(() => client.start(agent.filePath))}
                  aria-label={`Start ${agent.name}`}
                >
                  Start
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
      <CreateForm />
    </section>
  );
}
