/**
 * System: each extension and its state, and for a running one the resources its prefix lists (channel
 * adapters, MCP servers and their tools, compute, mesh, tracked folders; system-extensions.tsx) as lists
 * and tables, never raw JSON; a disabled or failed one says so and why, and a running one with a
 * problem (its mesh port in use, say) shows it.
 * Also the console sessions, revocable here.
 */
import { useEffect, useState } from 'preact/hooks';
import { client, type ExtensionInfo, type SessionInfo } from './api.js';
import { ExtensionState } from './system-extensions.js';
import { Readable } from './readable.js';
import { errorText, time, useLive } from './util.js';

function Extension({ ext }: { ext: ExtensionInfo }) {
  const on = ext.enabled && ext.loaded && ext.state !== 'failed' && ext.state !== 'stopped';
  return (
    <article class="panel" aria-labelledby={`ext-${ext.name}`} data-extension={ext.name}>
      <h2 id={`ext-${ext.name}`}>{ext.name}</h2>
      <p class={on ? 'ok' : 'off'}>{on ? `running (${ext.state ?? 'loaded'})` : !ext.enabled ? 'This extension is off (disabled in the manifest).' : `Not running: ${ext.error ?? ext.state ?? 'unknown'}`}</p>
      {on && ext.problem && <p role="status" class="error">{ext.problem}</p>}
      {ext.prefix && <p>Routes under <code>{ext.prefix}</code></p>}
      {on && ext.prefix && ext.name !== 'console' && <details open><summary>State</summary><ExtensionState name={ext.name} prefix={ext.prefix} /></details>}
    </article>
  );
}

function Sessions() {
  const [sessions, setSessions] = useState<SessionInfo[]>([]);
  const [error, setError] = useState('');
  const load = () => client.sessions().then((r) => setSessions(r.sessions), (e) => setError(errorText(e)));
  useEffect(() => void load(), []);
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Console sessions</h2>
      {error && <p role="alert" class="error">{error}</p>}
      <ul>
        {sessions.map((s) => (
          <li key={s.id}>
            {s.current ? 'This browser' : s.userAgent ?? 'unknown browser'} · via {s.via} · last used {time(s.lastUsedAt)}{' '}
            {!s.current && <button type="button" onClick={() => client.revoke(s.id).then(load)}>Revoke</button>}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Identity() {
  const [status, setStatus] = useState<Record<string, unknown> | null>(null);
  const [message, setMessage] = useState('');
  const load = () => client.identity().then(setStatus, (e) => setMessage(errorText(e)));
  useEffect(() => void load(), []);
  const unlock = (event: Event) => {
    event.preventDefault();
    const input = (event.currentTarget as HTMLFormElement).elements.namedItem('passphrase') as HTMLInputElement;
    const passphrase = input.value;
    input.value = '';
    client.unlockIdentity(passphrase).then(() => (setMessage('Unlocked.'), load()), (e) => setMessage(errorText(e)));
  };
  return (
    <section aria-labelledby="identity-title" class="panel">
      <h2 id="identity-title">Owner identity</h2>
      {status ? <Readable value={status} /> : <p class="muted">…</p>}
      {status?.locked === true && (
        <form class="row" onSubmit={unlock}>
          <label for="passphrase">Passphrase</label>
          <input id="passphrase" name="passphrase" type="password" autocomplete="current-password" required />
          <button type="submit">Unlock</button>
        </form>
      )}
      {message && <p role="status">{message}</p>}
    </section>
  );
}

function Providers() {
  const [list, setList] = useState<Array<{ id: string; name?: string; type?: string }>>([]);
  const [checks, setChecks] = useState<Record<string, unknown>>({});
  const [message, setMessage] = useState('');
  const [listError, setListError] = useState('');
  // The list is the providers extension's (503 when it is off); adding goes through the settings.
  const load = () => client.providers().then((r: any) => (setList(r.providers ?? []), setListError('')), (e) => setListError(errorText(e)));
  useEffect(() => void load(), []);
  const add = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const field = (name: string) => (form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement).value.trim();
    const provider = { id: field('provider-id'), type: field('provider-type'), name: field('provider-name'), baseUrl: field('provider-url'), ...(field('provider-model') ? { defaultModel: field('provider-model') } : {}), ...(field('provider-key-env') ? { apiKeyEnv: field('provider-key-env') } : {}) };
    client.addProvider(provider).then(() => (form.reset(), setMessage(`Added ${provider.name}.`), load()), (e) => setMessage(errorText(e)));
  };
  const check = (id: string) => client.checkProvider(id).then((r) => setChecks((c) => ({ ...c, [id]: r })), (e) => setChecks((c) => ({ ...c, [id]: errorText(e) })));
  return (
    <section aria-labelledby="providers-title" class="panel">
      <h2 id="providers-title">Providers</h2>
      {listError && <p class="muted">{listError}</p>}
      <ul>
        {list.map((p) => (
          <li key={p.id}>{p.name ?? p.id} <span class="muted">({p.type ?? 'provider'})</span>{' '}
            <button type="button" onClick={() => check(p.id)} aria-label={`Check ${p.name ?? p.id}`}>Check</button>
            {checks[p.id] !== undefined && <Readable value={checks[p.id]} />}
          </li>
        ))}
      </ul>
      <form class="stack" onSubmit={add} aria-labelledby="add-provider-title">
        <h3 id="add-provider-title">Add a provider</h3>
        <label for="provider-id">Id</label><input id="provider-id" name="provider-id" required pattern="[A-Za-z0-9:_.\-]+" />
        <label for="provider-type">Kind</label>
        <select id="provider-type" name="provider-type">{['openai-compatible', 'anthropic', 'openai', 'openrouter'].map((kind) => <option value={kind}>{kind}</option>)}</select>
        <label for="provider-name">Name</label><input id="provider-name" name="provider-name" required />
        <label for="provider-url">Base URL</label><input id="provider-url" name="provider-url" type="url" required />
        <label for="provider-model">Default model</label><input id="provider-model" name="provider-model" />
        <label for="provider-key-env">Key variable (the key stays in the daemon's environment)</label><input id="provider-key-env" name="provider-key-env" />
        <button type="submit">Add provider</button>
      </form>
      {message && <p role="status">{message}</p>}
    </section>
  );
}

export function SystemView() {
  const { data, error } = useLive(() => client.extensions(), (type) => type === 'extension.state.changed');
  return (
    <section aria-labelledby="system-title">
      <h1 id="system-title">System</h1>
      {error && <p role="alert" class="error">{error}</p>}
      <div class="panels">{(data?.extensions ?? []).map((ext) => <Extension key={ext.name} ext={ext} />)}</div>
      <div class="panels"><Identity /><Providers /></div>
      <Sessions />
    </section>
  );
}
