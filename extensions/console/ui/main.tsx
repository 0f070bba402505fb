/**
 * The console page: a login gate (one-time code from the URL fragment, or the daemon token pasted once),
 * then six views (fleet, agent, inbox, events, evals, system) chosen by the URL hash, in the shell (shell.tsx:
 * side navigation, header with health and identity). Everything the daemon
 * sends is rendered as text nodes by Preact (no innerHTML anywhere).
 */
import { render } from 'preact';
import { signal } from '@preact/signals';
import { effect } from '@preact/signals';
import { ApiError, client, sessionEnded } from './api.js';
import { events } from './stream.js';
import { Fleet } from './fleet.js';
import { AgentView } from './agent.js';
import { Inbox } from './inbox.js';
import { EventsView } from './events.js';
import { SystemView } from './system.js';
import { EvalsView } from './evals.js';
import { Header, SideNav } from './shell.js';

type Auth = 'checking' | 'out' | 'in';
const auth = signal<Auth>('checking');
const loginError = signal('');
const route = signal(location.hash);
addEventListener('hashchange', () => (route.value = location.hash));

async function boot(): Promise<void> {
  // A one-time code in the fragment (never sent to a server): exchanged once, then removed from the URL.
  const code = /^#code=([A-Za-z0-9_-]+)$/.exec(location.hash)?.[1];
  if (code) {
    history.replaceState(null, '', `${location.pathname}#/fleet`);
    route.value = location.hash;
    try {
      await client.loginWithCode(code);
    } catch (error) {
      loginError.value = error instanceof Error ? error.message : String(error);
    }
  }
  try {
    await client.sessions();
    signIn();
  } catch (error) {
    auth.value = 'out';
    if (!(error instanceof ApiError && error.status === 401)) loginError.value = String(error);
  }
}

function signIn(): void {
  sessionEnded.value = false;
  auth.value = 'in';
  events.start();
}

// A 401 anywhere (revoked or expired session): back to the login form, saying why.
effect(() => {
  if (!sessionEnded.value || auth.peek() !== 'in') return;
  events.stop();
  loginError.value = 'Your console session ended (revoked or expired). Log in again.';
  auth.value = 'out';
});

function Login() {
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem('token') as HTMLInputElement;
    const token = input.value.trim();
    input.value = '';
    try {
      await client.loginWithToken(token);
      loginError.value = '';
      signIn();
    } catch (error) {
      loginError.value = error instanceof Error ? error.message : String(error);
    }
  };
  return (
    <main class="login" id="main">
      <h1>
        <span class="brand">agt</span> console
      </h1>
      <p>
        Run <code>agt console</code> on the daemon's machine for a one-time login link, or paste the daemon token.
      </p>
      <form onSubmit={submit}>
        <label for="token">Daemon token</label>
        <input id="token" name="token" type="password" autocomplete="off" required />
        <button type="submit" class="primary">
          Log in
        </button>
      </form>
      {loginError.value && (
        <p role="alert" class="error">
          {loginError.value}
        </p>
      )}
    </main>
  );
}

function Shell() {
  const [, view = 'fleet', arg] = /^#\/([a-z]+)(?:\/(.+))?$/.exec(route.value) ?? [];
  const logout = async () => {
    events.stop();
    await client.logout().catch(() => undefined);
    auth.value = 'out';
  };
  return (
    <div class="layout">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <SideNav view={view} />
      <div class="column">
        <Header onLogout={logout} />
        <main id="main" tabIndex={-1}>
          {view === 'agent' && arg ? (
            <AgentView id={decodeURIComponent(arg)} />
          ) : view === 'inbox' ? (
            <Inbox />
          ) : view === 'events' ? (
            <EventsView />
          ) : view === 'evals' ? (
            <EvalsView arg={arg} />
          ) : view === 'system' ? (
            <SystemView />
          ) : (
            <Fleet />
          )}
        </main>
      </div>
    </div>
  );
}

function App() {
  if (auth.value === 'checking')
    return (
      <main id="main">
        <p>Loading…</p>
      </main>
    );
  return auth.value === 'in' ? <Shell /> : <Login />;
}

render(<App />, document.getElementById('app')!);
void boot();
