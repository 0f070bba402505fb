/**
 * The owner's OAuth sign-in to an MCP registration with `oauth` (docs/mcp.md "OAuth sign-in"): "Sign in"
 * asks the daemon for the authorization URL and opens it in a new tab (the authorization server sends the
 * browser back to the daemon, which keeps the tokens); the state shown is `GET /mcp/servers/{name}/login`,
 * asked again every two seconds while a sign-in waits for the browser. "Sign out" drops the tokens. After a
 * server asked for more scopes the state says so and "Sign in" asks for them. With `agent`, the same for that
 * agent's own sign-in to a registration whose sign-in is per agent (`?agent=` on each route).
 */
import { useEffect, useState } from 'preact/hooks';
import { client } from './api.js';
import { errorText } from './util.js';

type State = Awaited<ReturnType<typeof client.mcpSignInState>>;

export function McpSignIn({ name, agent }: { name: string; agent?: string }) {
  const [state, setState] = useState<State | null>(null);
  const [link, setLink] = useState('');
  const [problem, setProblem] = useState('');
  const [busy, setBusy] = useState(false);
  const refresh = () =>
    client.mcpSignInState(name, agent).then(
      (s) => {
        setState(s);
        if (!s.pending) setLink('');
      },
      (e) => setProblem(errorText(e)),
    );
  useEffect(() => void refresh(), [name, agent]);
  useEffect(() => {
    if (!state?.pending) return;
    const timer = setInterval(() => void refresh(), 2000);
    return () => clearInterval(timer);
  }, [name, agent, state?.pending]);

  const act = async (step: () => Promise<void>) => {
    setBusy(true);
    setProblem('');
    try {
      await step();
    } catch (e) {
      setProblem(errorText(e));
    } finally {
      setBusy(false);
      await refresh();
    }
  };
  const signIn = () =>
    act(async () => {
      const started = await client.mcpSignIn(name, agent);
      if (!started.authorizationUrl) return;
      setLink(started.authorizationUrl);
      // A blocked pop-up leaves the link below to follow by hand.
      window.open(started.authorizationUrl, '_blank', 'noopener');
    });
  const signOut = () => act(async () => void (await client.mcpSignOut(name, agent)));

  // A server asked for more scopes: "Sign in" again asks for them (the daemon keeps the union).
  const moreScopes = state?.scopeNeeded;
  const signedIn = state?.signedIn === true && !moreScopes;
  return (
    <span class="mcp-signin" data-signin={name}>
      {' · '}
      <span class={signedIn ? 'ok' : 'muted'}>
        {!state
          ? '…'
          : state.pending
            ? 'waiting for the browser'
            : moreScopes
              ? `sign-in needed (more scopes: ${moreScopes})`
              : signedIn
                ? 'signed in'
                : 'not signed in'}
      </span>
      {state?.error && !signedIn ? <span class="error"> ({state.error})</span> : null}{' '}
      {signedIn ? (
        <button type="button" disabled={busy} onClick={signOut} aria-label={`Sign out of ${name}`}>
          Sign out
        </button>
      ) : (
        <button type="button" disabled={busy} onClick={signIn} aria-label={`Sign in to ${name}`}>
          Sign in
        </button>
      )}
      {link ? (
        <>
          {' '}
          <a href={link} target="_blank" rel="noopener noreferrer">
            open the sign-in page
          </a>
        </>
      ) : null}
      {problem ? <span class="error"> {problem}</span> : null}
    </span>
  );
}
