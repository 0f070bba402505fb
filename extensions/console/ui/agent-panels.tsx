/**
 * Agent panels that change things: credentials set and unset (a value goes in once, through a password
 * field, and is never shown again: the daemon answers names and metadata only), timers listed in words,
 * added and deleted, and a backup made now (a consistent copy of the agent file, sealed to the owner
 * identity when asked).
 */
import { useEffect, useState } from 'preact/hooks';
import { client, type TimerInfo } from './api.js';
import { errorText, time } from './util.js';
import { relative } from './words.js';

export function Credentials({ id }: { id: string }) {
  const [list, setList] = useState<Awaited<ReturnType<typeof client.credentials>>['credentials'] | null>(null);
  const [message, setMessage] = useState('');
  const load = () =>
    client.credentials(id).then(
      (r) => setList(r.credentials),
      (e) => setMessage(errorText(e)),
    );
  useEffect(() => void load(), [id]);
  const set = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const name = (form.elements.namedItem('credential-name') as HTMLInputElement).value.trim();
    const value = form.elements.namedItem('credential-value') as HTMLInputElement;
    const secret = value.value;
    value.value = '';
    client.setCredential(id, name, secret).then(
      () => (form.reset(), setMessage(`Set ${name}.`), load()),
      (e) => setMessage(errorText(e)),
    );
  };
  const unset = (name: string) =>
    client.unsetCredential(id, name).then(
      () => (setMessage(`Removed ${name}.`), load()),
      (e) => setMessage(errorText(e)),
    );
  return (
    <div class="listing">
      <div class="table-wrap">
        <table>
          <caption class="sr-only">Credentials (names only: values are never shown)</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">State</th>
              <th scope="col">Changed</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(list ?? []).map((c) => (
              <tr key={c.name}>
                <td>
                  <code>{c.name}</code>
                </td>
                <td>{!c.set ? 'not set' : c.locked ? 'set, locked' : `set (${c.length} characters)`}</td>
                <td>{c.updated_at ? time(c.updated_at) : '—'}</td>
                <td>
                  <button
                    type="button"
                    class="small danger"
                    onClick={() => unset(c.name)}
                    aria-label={`Remove ${c.name}`}
                  >
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {list && list.length === 0 && <p class="muted row">No credential yet.</p>}
      </div>
      <form onSubmit={set} aria-labelledby="set-credential-title">
        <h3 id="set-credential-title">Set a credential</h3>
        <div class="form-grid">
          <div>
            <label for="credential-name">Name</label>
            <input id="credential-name" name="credential-name" required pattern="[A-Za-z0-9_.\-]+" autocomplete="off" />
          </div>
          <div>
            <label for="credential-value">Value</label>
            <input id="credential-value" name="credential-value" type="password" required autocomplete="new-password" />
          </div>
        </div>
        <div class="row">
          <span class="muted spacer">Sealed in the agent file; the console never shows it again.</span>
          <button type="submit" class="primary">
            Set credential
          </button>
        </div>
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
    client
      .backup(id, seal)
      .then(
        (r) => (setResult(r), setMessage('')),
        (e) => setMessage(errorText(e)),
      )
      .finally(() => setBusy(false));
  };
  return (
    <div class="stack">
      <p class="muted">
        A consistent copy of the agent file, made while the agent keeps working. Restore it from System.
      </p>
      <div class="row">
        <label>
          <input type="checkbox" checked={seal} onChange={() => setSeal(!seal)} /> Seal it to the owner identity
        </label>
        <button type="button" class="primary" disabled={busy} onClick={run}>
          {busy ? 'Backing up…' : 'Back up now'}
        </button>
      </div>
      {result && (
        <p role="status">
          Saved {result.sealed ? 'a sealed copy' : 'a copy'} ({result.bytes.toLocaleString()} bytes) to{' '}
          <code>{result.path}</code>.
        </p>
      )}
      {message && (
        <p role="alert" class="error">
          {message}
        </p>
      )}
    </div>
  );
}

const every = (ms: number) =>
  ms % 86_400_000 === 0
    ? `${ms / 86_400_000} d`
    : ms % 3_600_000 === 0
      ? `${ms / 3_600_000} h`
      : ms % 60_000 === 0
        ? `${ms / 60_000} min`
        : `${ms / 1000} s`;
const scheduleWords = (s: TimerInfo['schedule']) =>
  s.mode === 'interval'
    ? `every ${every(s.every_ms ?? 0)}`
    : s.mode === 'cron'
      ? `cron ${s.cron}`
      : s.at
        ? `once, ${new Date(s.at).toLocaleString()}`
        : 'once';

/** The minutes of an interval or a one-off timer (a one-off counted from now). */
const minutesOf = (timer: TimerInfo) => {
  const ms =
    timer.schedule.every_ms ?? (timer.next_wake_at ? timer.next_wake_at - Date.now() : timer.schedule.delay_ms) ?? 0;
  return String(Math.max(1, Math.round(ms / 60_000)));
};

export function Timers({ id }: { id: string }) {
  const [timers, setTimers] = useState<TimerInfo[] | null>(null);
  const [kind, setKind] = useState<'interval' | 'once_delay' | 'cron'>('interval');
  const [message, setMessage] = useState('');
  const [editing, setEditing] = useState<TimerInfo | null>(null);
  const edit = (timer: TimerInfo) => {
    setEditing(timer);
    setKind(timer.schedule.mode === 'cron' ? 'cron' : timer.schedule.mode === 'interval' ? 'interval' : 'once_delay');
  };
  const load = () =>
    client.timers(id).then(
      (r) => setTimers(r.timers),
      (e) => setMessage(errorText(e)),
    );
  useEffect(() => void load(), [id]);
  const add = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    const minutes = Number(value('timer-minutes'));
    const body = {
      mode: kind,
      ...(kind === 'interval'
        ? { every_ms: minutes * 60_000 }
        : kind === 'once_delay'
          ? { delay_ms: minutes * 60_000 }
          : { cron: value('timer-cron') }),
      ...(value('timer-payload') ? { payload: value('timer-payload') } : {}),
    };
    (editing ? client.replaceTimer(id, editing.id, body) : client.addTimer(id, body)).then(
      () => (setMessage(editing ? 'Timer saved.' : 'Timer added.'), setEditing(null), form.reset(), load()),
      (e) => setMessage(errorText(e)),
    );
  };
  const remove = (timerId: number) =>
    client.deleteTimer(id, timerId).then(
      () => (setMessage('Timer deleted.'), load()),
      (e) => setMessage(errorText(e)),
    );
  return (
    <div class="stack">
      <div class="table-wrap">
        <table class="timers">
          <caption class="sr-only">Timers</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Next</th>
              <th scope="col" class="num">
                Runs
              </th>
              <th scope="col">Message</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(timers ?? []).map((timer) => (
              <tr key={timer.id} class={timer.expired ? 'muted' : undefined}>
                <td>{scheduleWords(timer.schedule)}</td>
                <td>
                  {timer.expired ? (
                    'done'
                  ) : timer.next_wake_at ? (
                    <span title={new Date(timer.next_wake_at).toLocaleString()}>{relative(timer.next_wake_at)}</span>
                  ) : (
                    '—'
                  )}
                </td>
                <td class="num">{timer.run_count}</td>
                <td>{timer.payload ?? <span class="muted">—</span>}</td>
                <td>
                  {!timer.expired && (
                    <button
                      type="button"
                      class="small"
                      onClick={() => edit(timer)}
                      aria-label={`Edit timer ${timer.id}`}
                    >
                      Edit
                    </button>
                  )}{' '}
                  <button
                    type="button"
                    class="small danger"
                    onClick={() => remove(timer.id)}
                    aria-label={`Delete timer ${timer.id}`}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {timers && timers.length === 0 && <p class="muted row">No timer.</p>}
      </div>
      <form onSubmit={add} aria-labelledby="add-timer-title" key={editing?.id ?? 'new'}>
        <h3 id="add-timer-title">{editing ? `Change timer ${editing.id}` : 'Add a timer'}</h3>
        <div class="form-grid">
          <div>
            <label for="timer-kind">Kind</label>
            <select
              id="timer-kind"
              value={kind}
              onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value as typeof kind)}
            >
              <option value="interval">Every …</option>
              <option value="once_delay">Once, in …</option>
              <option value="cron">Cron</option>
            </select>
          </div>
          {kind === 'cron' ? (
            <div>
              <label for="timer-cron">Cron expression</label>
              <input
                id="timer-cron"
                name="timer-cron"
                required
                placeholder="0 9 * * 1-5"
                defaultValue={editing?.schedule.cron ?? ''}
              />
            </div>
          ) : (
            <div>
              <label for="timer-minutes">Minutes</label>
              <input
                id="timer-minutes"
                name="timer-minutes"
                type="number"
                min="1"
                required
                defaultValue={editing ? minutesOf(editing) : ''}
              />
            </div>
          )}
          <div>
            <label for="timer-payload">Message to the agent</label>
            <input id="timer-payload" name="timer-payload" defaultValue={editing?.payload ?? ''} />
          </div>
        </div>
        <div class="row">
          <span class="spacer" />
          {editing && (
            <button type="button" onClick={() => setEditing(null)}>
              Cancel
            </button>
          )}
          <button type="submit" class="primary">
            {editing ? 'Save timer' : 'Add timer'}
          </button>
        </div>
      </form>
      {message && <p role="status">{message}</p>}
    </div>
  );
}
