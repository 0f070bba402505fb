/**
 * System: each extension and its state, and for a running one the resources its prefix lists (channel
 * adapters, MCP servers and their tools, compute, mesh, tracked folders; system-extensions.tsx) as lists
 * and tables, never raw JSON; a disabled or failed one says so and why, and a running one with a
 * problem (its mesh port in use, say) shows it.
 * Each card turns its extension off (at once) or on (at the next start). Also the console sessions, revocable
 * here; backups in system-backups.tsx; the fleet's daemons in system-fleet.tsx.
 */
import { useEffect, useState } from 'preact/hooks';
import { client, type ExtensionInfo, type SessionInfo } from './api.js';
import { ExtensionState } from './system-extensions.js';
import { ExtensionOptions } from './extension-options.js';
import { Spend } from './spend.js';
import { Backups } from './system-backups.js';
import { FleetDaemons } from './system-fleet.js';
import { Readable } from './readable.js';
import { errorText, time, useLive } from './util.js';
import { fieldWord, identityWord, relative, Term } from './words.js';

const ABOUT: Record<string, string> = {
  channels: 'Messaging channels (chat apps, mail) the agents talk through',
  mcp: 'MCP servers and the tools they give agents',
  compute: 'Containers the agents run commands in',
  mesh: 'Agent-to-agent messages between daemons',
  console: 'This web console',
  providers: 'Model providers',
  'tracked-folders': 'Folders whose agent files are watched',
  telemetry: 'Traces and metrics sent to a collector',
  fleet: 'Several daemons as one, on NATS (the fleet daemons panel above)',
};

/** Off at once, on at the next start (routes are fixed once the daemon listens): docs/extensions.md. */
function Switch({ ext }: { ext: ExtensionInfo }) {
  const [message, setMessage] = useState('');
  // The console turning itself off would leave this page without its routes: `agt extensions off console` does it.
  if (ext.name === 'console') return null;
  const turn = (enabled: boolean) =>
    client.setExtensionEnabled(ext.name, enabled).then(
      (r) =>
        setMessage(
          enabled
            ? r.restartRequired
              ? 'Turned on: it loads at the next start of the daemon.'
              : 'On.'
            : 'Turned off: stopped, its routes answer 503.',
        ),
      (e) => setMessage(errorText(e)),
    );
  return (
    <div class="row">
      <button
        type="button"
        class="small"
        aria-label={`${ext.enabled ? 'Turn off' : 'Turn on'} ${ext.name}`}
        onClick={() => turn(!ext.enabled)}
      >
        {ext.enabled ? 'Turn off' : 'Turn on'}
      </button>
      {message && <span role="status">{message}</span>}
    </div>
  );
}

function Extension({ ext }: { ext: ExtensionInfo }) {
  const on = ext.enabled && ext.loaded && ext.state !== 'failed' && ext.state !== 'stopped';
  const word = on ? 'Running' : !ext.enabled ? 'Off' : ext.state === 'disabled' ? 'On at next start' : 'Not running';
  return (
    <article class="panel" aria-labelledby={`ext-${ext.name}`} data-extension={ext.name}>
      <div class="head-row">
        <h2 id={`ext-${ext.name}`} class="ext-name">
          {ext.name}
        </h2>
        <Term
          word={word}
          raw={`state: ${ext.state ?? 'none'}, enabled: ${ext.enabled}, loaded: ${ext.loaded}${ext.prefix ? `, routes: ${ext.prefix}` : ''}`}
          tone={on ? (ext.problem ? 'wait' : 'ok') : !ext.enabled ? 'off' : ext.state === 'disabled' ? 'wait' : 'error'}
        />
      </div>
      {ABOUT[ext.name] && <p class="muted">{ABOUT[ext.name]}</p>}
      {on && ext.problem && (
        <p role="status" class="error">
          {ext.problem}
        </p>
      )}
      {!on && (
        <p class="muted">
          {!ext.enabled
            ? 'This extension is off.'
            : ext.state === 'disabled'
              ? 'Turned on: it loads at the next start of the daemon.'
              : `Not running: ${ext.error ?? ext.state ?? 'unknown'}`}
        </p>
      )}
      <Switch ext={ext} />
      {on && ext.prefix && ext.name !== 'console' && (
        <details>
          <summary>Details</summary>
          <ExtensionState name={ext.name} prefix={ext.prefix} />
        </details>
      )}
      <details>
        <summary>Options</summary>
        <ExtensionOptions name={ext.name} />
      </details>
    </article>
  );
}

function Sessions() {
  const [sessions, setSessions] = useState<SessionInfo[]>([]);
  const [error, setError] = useState('');
  const load = () =>
    client.sessions().then(
      (r) => setSessions(r.sessions),
      (e) => setError(errorText(e)),
    );
  useEffect(() => void load(), []);
  return (
    <section aria-labelledby="sessions-title" class="panel">
      <h2 id="sessions-title">Console sessions</h2>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <ul>
        {sessions.map((s) => (
          <li key={s.id}>
            {s.current ? 'This browser' : (s.userAgent ?? 'unknown browser')} ·{' '}
            {s.via === 'code' ? 'one-time link' : 'daemon token'} · last used{' '}
            <span title={time(s.lastUsedAt)}>{relative(s.lastUsedAt)}</span>{' '}
            {!s.current && (
              <button type="button" onClick={() => client.revoke(s.id).then(load)}>
                Revoke
              </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

const IDENTITY_NOTE: Record<string, string> = {
  ready: 'Unlocked: agents can open their keys and credentials.',
  locked: 'Locked: agents cannot open their keys or credentials until you unlock it.',
  none: 'No owner identity yet: create one with agt identity create.',
  'restore-needed': 'The identity must be restored from its recovery phrase (agt identity restore).',
};

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
    client.unlockIdentity(passphrase).then(
      () => (setMessage('Unlocked.'), load()),
      (e) => setMessage(errorText(e)),
    );
  };
  const state = String(status?.status ?? '');
  const [word, tone] = identityWord(state);
  const fields = ['ownerDid', 'runtimeDid', 'storage', 'backupConfirmed', 'passphraseRequired'] as const;
  return (
    <section aria-labelledby="identity-title" class="panel">
      <div class="head-row">
        <h2 id="identity-title">Owner identity</h2>
        {status && <Term word={word} raw={state} tone={tone} />}
      </div>
      {status ? (
        <>
          <p class="muted">
            {IDENTITY_NOTE[state] ?? ''}
            {state === 'ready' && status.backupConfirmed === false
              ? ' Its recovery phrase is not marked as backed up yet (agt identity confirm-backup).'
              : ''}
          </p>
          <dl class="readable">
            {fields
              .filter((key) => status[key] !== undefined && status[key] !== null)
              .map((key) => (
                <div key={key}>
                  <dt>{fieldWord(key)}</dt>
                  <dd>
                    {typeof status[key] === 'boolean' ? (
                      status[key] ? (
                        'Yes'
                      ) : (
                        'No'
                      )
                    ) : key.endsWith('Did') ? (
                      <Term word={`…${String(status[key]).slice(-8)}`} raw={String(status[key])} />
                    ) : (
                      String(status[key])
                    )}
                  </dd>
                </div>
              ))}
          </dl>
        </>
      ) : (
        <p class="muted">…</p>
      )}
      {state === 'locked' && (
        <form class="row" onSubmit={unlock}>
          <label for="passphrase">Passphrase</label>
          <input id="passphrase" name="passphrase" type="password" autocomplete="current-password" required />
          <button type="submit" class="primary">
            Unlock
          </button>
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
  const load = () =>
    client.providers().then(
      (r: any) => (setList(r.providers ?? []), setListError('')),
      (e) => setListError(errorText(e)),
    );
  useEffect(() => void load(), []);
  const add = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const field = (name: string) =>
      (form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement).value.trim();
    const provider = {
      id: field('provider-id'),
      type: field('provider-type'),
      name: field('provider-name'),
      baseUrl: field('provider-url'),
      ...(field('provider-model') ? { defaultModel: field('provider-model') } : {}),
      ...(field('provider-key-env') ? { apiKeyEnv: field('provider-key-env') } : {}),
    };
    client.addProvider(provider).then(
      () => (form.reset(), setMessage(`Added ${provider.name}.`), load()),
      (e) => setMessage(errorText(e)),
    );
  };
  const models = (id: string) =>
    client.providerModels(id).then(
      (r) => setChecks((c) => ({ ...c, [id]: r })),
      (e) => setChecks((c) => ({ ...c, [id]: errorText(e) })),
    );
  const check = (id: string) =>
    client.checkProvider(id).then(
      (r) => setChecks((c) => ({ ...c, [id]: r })),
      (e) => setChecks((c) => ({ ...c, [id]: errorText(e) })),
    );
  return (
    <section aria-labelledby="providers-title" class="panel">
      <h2 id="providers-title">Providers</h2>
      {listError && <p class="muted">{listError}</p>}
      {list.length > 0 && (
        <div class="table-wrap">
          <table class="providers">
            <caption class="sr-only">Providers</caption>
            <thead>
              <tr>
                <th scope="col">Provider</th>
                <th scope="col">Kind</th>
                <th scope="col">Check and models</th>
              </tr>
            </thead>
            <tbody>
              {list.map((p) => (
                <tr key={p.id}>
                  <td>
                    <strong>{p.name ?? p.id}</strong>
                    <br />
                    <code class="muted">{p.id}</code>
                  </td>
                  <td>{p.type ?? 'provider'}</td>
                  <td>
                    <button
                      type="button"
                      class="small"
                      onClick={() => check(p.id)}
                      aria-label={`Check ${p.name ?? p.id}`}
                    >
                      Check
                    </button>{' '}
                    <button
                      type="button"
                      class="small"
                      onClick={() => models(p.id)}
                      aria-label={`Models of ${p.name ?? p.id}`}
                    >
                      Models
                    </button>
                    {checks[p.id] !== undefined && <Readable value={checks[p.id]} />}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form onSubmit={add} aria-labelledby="add-provider-title">
        <h3 id="add-provider-title">Add a provider</h3>
        <div class="form-grid">
          <div>
            <label for="provider-name">Name</label>
            <input id="provider-name" name="provider-name" required />
          </div>
          <div>
            <label for="provider-id">Id</label>
            <input id="provider-id" name="provider-id" required pattern="[A-Za-z0-9:_.\-]+" />
          </div>
          <div>
            <label for="provider-type">Kind</label>
            <select id="provider-type" name="provider-type">
              {['openai-compatible', 'anthropic', 'openai', 'openrouter'].map((kind) => (
                <option value={kind}>{kind}</option>
              ))}
            </select>
          </div>
          <div>
            <label for="provider-url">Base URL</label>
            <input id="provider-url" name="provider-url" type="url" required />
          </div>
          <div>
            <label for="provider-model">Default model</label>
            <input id="provider-model" name="provider-model" />
          </div>
          <div>
            <label for="provider-key-env">Key variable</label>
            <input id="provider-key-env" name="provider-key-env" aria-describedby="key-env-note" />
          </div>
        </div>
        <div class="row">
          <span id="key-env-note" class="muted spacer">
            The key stays in the daemon's environment; only the variable's name is saved.
          </span>
          <button type="submit" class="primary">
            Add provider
          </button>
        </div>
      </form>
      {message && <p role="status">{message}</p>}
    </section>
  );
}

export function SystemView() {
  const { data, error } = useLive(
    () => client.extensions(),
    (type) => type === 'extension.state.changed',
  );
  return (
    <section aria-labelledby="system-title">
      <h1 id="system-title">System</h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="wide-panels">
        <Identity />
        <Providers />
        <Spend />
        <Backups />
      </div>
      <FleetDaemons />
      <h2>Extensions</h2>
      <div class="panels">
        {(data?.extensions ?? []).map((ext) => (
          <Extension key={ext.name} ext={ext} />
        ))}
      </div>
      <Sessions />
    </section>
  );
}
