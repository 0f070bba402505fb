/**
 * Agent panels that change things: credentials set and unset (a value goes in once, through a password
 * field, and is never shown again: the daemon answers names and metadata only), and a backup made now
 * (a consistent copy of the agent file, sealed to the owner identity when asked).
 */
import { useEffect, useState } from 'preact/hooks';
import { client } from './api.js';
import { errorText, time } from './util.js';

export function Credentials({ id }: { id: string }) {
  const [list, setList] = useState<Awaited<ReturnType<typeof client.credentials>>['credentials'] | null>(null);
  const [message, setMessage] = useState('');
  const load = () => client.credentials(id).then((r) => setList(r.credentials), (e) => setMessage(errorText(e)));
  useEffect(() => void load(), [id]);
  const set = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const name = (form.elements.namedItem('credential-name') as HTMLInputElement).value.trim();
    const value = form.elements.namedItem('credential-value') as HTMLInputElement;
    const secret = value.value;
    value.value = '';
    client.setCredential(id, name, secret).then(() => (form.reset(), setMessage(`Set ${name}.`), load()), (e) => setMessage(errorText(e)));
  };
  const unset = (name: string) => client.unsetCredential(id, name).then(() => (setMessage(`Removed ${name}.`), load()), (e) => setMessage(errorText(e)));
  return (
    <div class="listing">
      <div class="table-wrap">
        <table>
          <caption class="sr-only">Credentials (names only: values are never shown)</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Changed</th><th scope="col">Actions</th></tr></thead>
          <tbody>
            {(list ?? []).map((c) => (
              <tr key={c.name}>
                <td><code>{c.name}</code></td>
                <td>{!c.set ? 'not set' : c.locked ? 'set, locked' : `set (${c.length} characters)`}</td>
                <td>{c.updated_at ? time(c.updated_at) : '—'}</td>
                <td><button type="button" class="small danger" onClick={() => unset(c.name)} aria-label={`Remove ${c.name}`}>Remove</button></td>
              </tr>
            ))}
          </tbody>
        </table>
        {list && list.length === 0 && <p class="muted row">No credential yet.</p>}
      </div>
      <form onSubmit={set} aria-labelledby="set-credential-title">
        <h3 id="set-credential-title">Set a credential</h3>
        <div class="form-grid">
          <div><label for="credential-name">Name</label><input id="credential-name" name="credential-name" required pattern="[A-Za-z0-9_.\-]+" autocomplete="off" /></div>
          <div><label for="credential-value">Value</label><input id="credential-value" name="credential-value" type="password" required autocomplete="new-password" /></div>
        </div>
        <div class="row"><span class="muted spacer">Sealed in the agent file; the console never shows it again.</span><button type="submit" class="primary">Set credential</button></div>
      </form>
      {message && <p role="status">{message}</p>}
    </div>
  );
}

export function Backup({ id }: { id: string }) {
  const [seal, setSeal] = useState(false);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ path: string; bytes: number; sealed: boolean } | null>(null);
  const [message, setMessage] = useState('');
  const run = () => {
    setBusy(true);
    client.backup(id, seal).then((r) => (setResult(r), setMessage('')), (e) => setMessage(errorText(e))).finally(() => setBusy(false));
  };
  return (
    <div class="stack">
      <p class="muted">A consistent copy of the agent file, made while the agent keeps working. Restore it from System.</p>
      <div class="row">
        <label><input type="checkbox" checked={seal} onChange={() => setSeal(!seal)} /> Seal it to the owner identity</label>
        <button type="button" class="primary" disabled={busy} onClick={run}>{busy ? 'Backing up…' : 'Back up now'}</button>
      </div>
      {result && <p role="status">Saved {result.sealed ? 'a sealed copy' : 'a copy'} ({result.bytes.toLocaleString()} bytes) to <code>{result.path}</code>.</p>}
      {message && <p role="alert" class="error">{message}</p>}
    </div>
  );
}
