/**
 * The frame around every view: the side navigation (with the count of what waits for the owner), and
 * the header with the daemon's health, the owner identity's lock state (an unlock form in place when it
 * is locked), the theme (system, light, dark; kept for this page only, nothing is stored) and log out.
 */
import { signal } from '@preact/signals';
import { useState } from 'preact/hooks';
import { client } from './api.js';
import { streamState } from './stream.js';
import { errorText, useLive } from './util.js';
import { identityWord, relative, Term } from './words.js';

export const VIEWS = [
  ['fleet', 'Fleet'],
  ['inbox', 'Inbox'],
  ['events', 'Events'],
  ['evals', 'Evals'],
  ['system', 'System'],
] as const;

const THEMES = ['system', 'light', 'dark'] as const;
const theme = signal<(typeof THEMES)[number]>('system');
const applyTheme = () => {
  if (theme.value === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme.value;
};

const TASKS = /^(hil\.|task\.|turn\.|agent\.(unloaded|loaded))/;

export function SideNav({ view }: { view: string }) {
  const { data } = useLive(
    () => client.tasks(),
    (type) => TASKS.test(type),
  );
  const waiting = data?.tasks.length ?? 0;
  return (
    <nav class="sidenav" aria-label="Views">
      <div class="sidenav-inner">
        <span class="brand">
          agt<span class="muted"> console</span>
        </span>
        <ul>
          {VIEWS.map(([id, label]) => (
            <li key={id}>
              <a
                href={`#/${id}`}
                aria-current={view === id || (id === 'fleet' && view === 'agent') ? 'page' : undefined}
              >
                {label}
                {id === 'inbox' && waiting > 0 && (
                  <span class="count" aria-label={`${waiting} waiting`}>
                    {waiting}
                  </span>
                )}
              </a>
            </li>
          ))}
        </ul>
      </div>
    </nav>
  );
}

function Health() {
  const { data, error } = useLive(
    () => client.health(),
    (type) => type.startsWith('daemon.'),
  );
  const live = streamState.value;
  const tone = error ? 'error' : live === 'open' ? 'ok' : 'wait';
  const word = error ? 'Daemon unreachable' : live === 'open' ? 'Daemon healthy' : 'Reconnecting…';
  const raw = data
    ? `version ${String(data.version)}, up ${relative(Date.now() - Number(data.uptimeMs)).replace(' ago', '')}, stream ${live}`
    : error || live;
  return (
    <span class="health">
      <span class={`dot tone-${tone}`} aria-hidden="true" />
      <Term word={word} raw={raw} />
    </span>
  );
}

function IdentityLock() {
  const { data, error, reload } = useLive(
    () => client.identity(),
    (type) => type.startsWith('identity.'),
  );
  const [open, setOpen] = useState(false);
  const [message, setMessage] = useState('');
  const state = data?.status ?? (error ? 'unknown' : '…');
  const [word, tone] = identityWord(state);
  const unlock = (event: Event) => {
    event.preventDefault();
    const input = (event.currentTarget as HTMLFormElement).elements.namedItem('unlock-passphrase') as HTMLInputElement;
    const passphrase = input.value;
    input.value = '';
    client.unlockIdentity(passphrase).then(
      () => (setMessage(''), setOpen(false), reload()),
      (e) => setMessage(errorText(e)),
    );
  };
  return (
    <span class="identity">
      <span class="muted">Identity</span> <Term word={word} raw={state} tone={tone} />
      {state === 'locked' && (
        <button type="button" class="primary small" aria-expanded={open} onClick={() => setOpen(!open)}>
          Unlock
        </button>
      )}
      {open && (
        <form class="popover" onSubmit={unlock} aria-label="Unlock the owner identity">
          <label for="unlock-passphrase">Passphrase</label>
          <input
            id="unlock-passphrase"
            name="unlock-passphrase"
            type="password"
            autocomplete="current-password"
            required
          />
          <button type="submit" class="primary">
            Unlock identity
          </button>
          {message && (
            <p role="alert" class="error">
              {message}
            </p>
          )}
        </form>
      )}
    </span>
  );
}

export function Header({ onLogout }: { onLogout: () => void }) {
  const next = () => {
    theme.value = THEMES[(THEMES.indexOf(theme.value) + 1) % THEMES.length]!;
    applyTheme();
  };
  return (
    <header class="topbar">
      <Health />
      <IdentityLock />
      <span class="spacer" />
      <button type="button" class="ghost" onClick={next} aria-label={`Theme: ${theme.value} (change)`}>
        Theme: {theme.value}
      </button>
      <button type="button" class="ghost" onClick={onLogout}>
        Log out
      </button>
    </header>
  );
}
