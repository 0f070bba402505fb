/**
 * Fleet: every loaded agent with its live state, last activity and today's usage (reloaded on the
 * stream's events, never polled), the agent files of tracked folders that are not loaded, start, stop,
 * create from a template.
 */
import { signal } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import { client } from './api.js';
import { events } from './stream.js';
import { errorText, time, useLive } from './util.js';

/**
 * When each agent last did something: the newest row of its durable conversation (loaded with the list,
 * so it survives a page reload and a daemon restart), raised by the stream's events as they arrive.
 */
const durableActivity = signal<Record<string, number>>({});
const lastActivity = signal<Record<string, number>>({});
events.on((event) => {
  if (event.agent_id) lastActivity.value = { ...lastActivity.value, [event.agent_id]: event.timestamp };
});

const LIVE = /^(agent\.|turn\.|tracked\.)/;

export function Fleet() {
  const { data: agents, error } = useLive(() => client.agents(), (type) => LIVE.test(type));
  const { data: usage } = useLive(() => client.usageToday(), (type) => type === 'llm.completed');
  const { data: tracked } = useLive(() => client.tracked().catch(() => ({ agents: [] })), (type) => type === 'tracked.changed' || type === 'agent.loaded' || type === 'agent.unloaded');
  useEffect(() => {
    for (const agent of agents ?? []) {
      client.lastRow(agent.id).then((page) => {
        const at = page.rows.at(-1)?.created_at;
        if (at !== undefined) durableActivity.value = { ...durableActivity.value, [agent.id]: at };
      }, () => undefined);
    }
  }, [agents]);
  const lastAt = (id: string) => Math.max(durableActivity.value[id] ?? 0, lastActivity.value[id] ?? 0);
  const today = new Map((usage?.groups ?? []).map((group) => [group.key, group]));
  const notLoaded = (tracked?.agents ?? []).filter((agent) => !agent.loaded);
  const { data: templates } = useLive(() => client.templates(), () => false);
  const [message, setMessage] = useState('');
  const act = (what: () => Promise<unknown>) => what().then(() => setMessage(''), (e) => setMessage(errorText(e)));
  const create = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const name = (form.elements.namedItem('name') as HTMLInputElement).value.trim();
    const template = (form.elements.namedItem('template') as HTMLSelectElement).value;
    void act(async () => {
      await client.create(name, template || undefined);
      form.reset();
    });
  };
  return (
    <section aria-labelledby="fleet-title">
      <h1 id="fleet-title">Fleet</h1>
      {error && <p role="alert" class="error">{error}</p>}
      {message && <p role="alert" class="error">{message}</p>}
      <table class="fleet">
        <caption class="sr-only">Agents and their state</caption>
        <thead><tr><th scope="col">Agent</th><th scope="col">State</th><th scope="col">Display</th><th scope="col">Last activity</th><th scope="col">Today</th><th scope="col">Actions</th></tr></thead>
        <tbody>
          {(agents ?? []).map((agent) => (
            <tr key={agent.id} data-agent-id={agent.id}>
              <td><a class="agent-name" href={`#/agent/${encodeURIComponent(agent.id)}`}>{agent.name}</a></td>
              <td><span class={`state state-${agent.runtimeState}`}>{agent.runtimeState}</span></td>
              <td>{agent.displayState}</td>
              <td>{lastAt(agent.id) ? time(lastAt(agent.id)) : '—'}</td>
              <td>{today.has(agent.id) ? `${today.get(agent.id)!.calls} calls, ${today.get(agent.id)!.input + today.get(agent.id)!.output} tokens${today.get(agent.id)!.cost_usd !== null ? `, $${today.get(agent.id)!.cost_usd!.toFixed(4)}` : ''}` : '—'}</td>
              <td>
                <button type="button" onClick={() => act(() => client.start(agent.id))} aria-label={`Start ${agent.name}`}>Start</button>
                <button type="button" onClick={() => act(() => client.stop(agent.id))} aria-label={`Stop ${agent.name}`}>Stop</button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {agents && agents.length === 0 && <p>No agent is loaded.</p>}
      {notLoaded.length > 0 && (
        <>
          <h2>In tracked folders, not loaded</h2>
          <ul>
            {notLoaded.map((agent) => (
              <li key={agent.filePath}>{agent.name} <span class="muted">{agent.filePath}</span>{' '}
                <button type="button" onClick={() => act(() => client.start(agent.filePath))} aria-label={`Start ${agent.name}`}>Start</button>
              </li>
            ))}
          </ul>
        </>
      )}
      <form class="row" onSubmit={create}>
        <h2>New agent</h2>
        <label for="new-name">Name</label>
        <input id="new-name" name="name" required maxLength={64} />
        <label for="new-template">Template</label>
        <select id="new-template" name="template">
          {(templates?.templates ?? [{ id: 'standard' }]).map((template) => <option value={template.id}>{template.name ?? template.id}</option>)}
        </select>
        <button type="submit">Create</button>
      </form>
    </section>
  );
}
