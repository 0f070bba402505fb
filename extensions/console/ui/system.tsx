/**
 * System: each extension and its state, and for a running one the resources its prefix lists (channel
 * adapters, MCP servers, compute, mesh, tracked folders); a disabled or failed one says so and why.
 * Also the console sessions, revocable here.
 */
import { useEffect, useState } from 'preact/hooks';
import { client, type ExtensionInfo, type SessionInfo } from './api.js';
import { errorText, time, useLive } from './util.js';

function Extension({ ext }: { ext: ExtensionInfo }) {
  const [index, setIndex] = useState<string>('');
  const on = ext.enabled && ext.loaded && ext.state !== 'failed' && ext.state !== 'stopped';
  useEffect(() => {
    if (!on || !ext.prefix || ext.name === 'console') return;
    client.extensionIndex(ext.prefix).then((value) => setIndex(JSON.stringify(value, null, 2)), (e) => setIndex(errorText(e)));
  }, [ext.name, on]);
  return (
    <article class="panel" aria-labelledby={`ext-${ext.name}`} data-extension={ext.name}>
      <h2 id={`ext-${ext.name}`}>{ext.name}</h2>
      <p class={on ? 'ok' : 'off'}>{on ? `running (${ext.state ?? 'loaded'})` : !ext.enabled ? 'This extension is off (disabled in the manifest).' : `Not running: ${ext.error ?? ext.state ?? 'unknown'}`}</p>
      {ext.prefix && <p>Routes under <code>{ext.prefix}</code></p>}
      {index && <details><summary>Resources</summary><pre>{index}</pre></details>}
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

export function SystemView() {
  const { data, error } = useLive(() => client.extensions(), (type) => type === 'extension.state.changed');
  return (
    <section aria-labelledby="system-title">
      <h1 id="system-title">System</h1>
      {error && <p role="alert" class="error">{error}</p>}
      <div class="panels">{(data?.extensions ?? []).map((ext) => <Extension key={ext.name} ext={ext} />)}</div>
      <Sessions />
    </section>
  );
}
