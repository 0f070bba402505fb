/** Fleet: every loaded agent with its live state (reloaded on the stream's agent events), start, stop, create. */
import { useState } from 'preact/hooks';
import { client } from './api.js';
import { errorText, useLive } from './util.js';

const LIVE = /^(agent\.|turn\.|tracked\.)/;

export function Fleet() {
  const { data: agents, error } = useLive(() => client.agents(), (type) => LIVE.test(type));
  const [message, setMessage] = useState('');
  const act = (what: () => Promise<unknown>) => what().then(() => setMessage(''), (e) => setMessage(errorText(e)));
  const create = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const name = (form.elements.namedItem('name') as HTMLInputElement).value.trim();
    const template = (form.elements.namedItem('template') as HTMLInputElement).value.trim();
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
        <thead><tr><th scope="col">Agent</th><th scope="col">State</th><th scope="col">Display</th><th scope="col">Actions</th></tr></thead>
        <tbody>
          {(agents ?? []).map((agent) => (
            <tr key={agent.id} data-agent-id={agent.id}>
              <td><a class="agent-name" href={`#/agent/${encodeURIComponent(agent.id)}`}>{agent.name}</a></td>
              <td><span class={`state state-${agent.runtimeState}`}>{agent.runtimeState}</span></td>
              <td>{agent.displayState}</td>
              <td>
                <button type="button" onClick={() => act(() => client.start(agent.id))} aria-label={`Start ${agent.name}`}>Start</button>
                <button type="button" onClick={() => act(() => client.stop(agent.id))} aria-label={`Stop ${agent.name}`}>Stop</button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {agents && agents.length === 0 && <p>No agent is loaded.</p>}
      <form class="row" onSubmit={create}>
        <h2>New agent</h2>
        <label for="new-name">Name</label>
        <input id="new-name" name="name" required maxLength={64} />
        <label for="new-template">Template</label>
        <input id="new-template" name="template" placeholder="standard" />
        <button type="submit">Create</button>
      </form>
    </section>
  );
}
