/**
 * What a running extension holds, as readable lists: the MCP registrations (with the sign-in of those with
 * `oauth`, mcp-signin.tsx) and each open server with its state and its tools (from the agent's tool list, `source: "mcp:<server>"`); channels, compute and mesh
 * have panels of their own (system-views.tsx); for the others (tracked folders, ...) what `GET` on the
 * prefix answers.
 */
import { useEffect, useState } from 'preact/hooks';
import { Channels, Compute, Mesh } from './system-views.js';
import { client, type McpServerInfo } from './api.js';
import { McpSignIn } from './mcp-signin.js';
import { Readable } from './readable.js';
import { errorText } from './util.js';

/** Loads once per mount; an error is shown as its text. */
function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: string }>({});
  useEffect(
    () =>
      void load().then(
        (data) => setState({ data }),
        (e) => setState({ error: errorText(e) }),
      ),
    deps,
  );
  return state;
}

function McpServer({ server }: { server: McpServerInfo }) {
  const { data, error } = useLoad(() => client.tools(server.agentId), [server.agentId, server.name, server.status]);
  const tools = (data?.tools ?? []).filter((tool) => tool.source === `mcp:${server.name}`);
  return (
    <li data-mcp-server={server.name}>
      <strong>{server.name}</strong> of {server.agentId}:{' '}
      <span class={server.status === 'connected' ? 'ok' : server.status === 'error' ? 'error' : 'muted'}>
        {server.status}
      </span>
      {server.transport ? ` · ${server.transport}` : ''}
      {server.error ? ` · ${server.error}` : ''}
      {error ? (
        <p class="error">{error}</p>
      ) : (
        <ul aria-label={`Tools of ${server.name}`}>
          {tools.map((tool) => (
            <li key={tool.name}>
              <code>{tool.name}</code>
              {tool.enabled === false ? ' (disabled)' : ''}
              {tool.description ? ` · ${tool.description}` : ''}
            </li>
          ))}
          {data && tools.length === 0 && <li class="muted">no tools</li>}
        </ul>
      )}
    </li>
  );
}

function Mcp() {
  const { data, error } = useLoad(() => client.mcp(), []);
  if (error) return <p class="error">{error}</p>;
  if (!data) return <p class="muted">…</p>;
  return (
    <>
      <h3>Registered servers</h3>
      {data.registrations.length === 0 ? (
        <p class="muted">none</p>
      ) : (
        <ul class="mcp-registrations">
          {data.registrations.map((r) => (
            <li key={r.name}>
              <strong>{r.name}</strong> · {r.type}{' '}
              <span class="muted">{String(r.url ?? r.npmPackage ?? r.command ?? '')}</span>
              {r.oauth ? (
                (r.oauth as { signIn?: string }).signIn === 'per-agent' ? (
                  <span class="muted"> · each agent signs in, from the MCP tab of its view</span>
                ) : (
                  <McpSignIn name={r.name} />
                )
              ) : null}
            </li>
          ))}
        </ul>
      )}
      <h3>Open servers</h3>
      {data.servers.length === 0 ? (
        <p class="muted">none (no loaded agent declares one)</p>
      ) : (
        <ul>
          {data.servers.map((s) => (
            <McpServer key={`${s.agentId}/${s.name}`} server={s} />
          ))}
        </ul>
      )}
    </>
  );
}

/** Extensions with a panel of their own; the others' `GET` on the prefix is laid out generically. */
const DEDICATED: Record<string, () => preact.JSX.Element> = {
  mcp: Mcp,
  mesh: Mesh,
  channels: Channels,
  compute: Compute,
};

export function ExtensionState({ name, prefix }: { name: string; prefix: string }) {
  const own = name in DEDICATED;
  const { data, error } = useLoad(() => (own ? Promise.resolve(null) : client.extensionIndex(prefix)), [name, prefix]);
  const Dedicated = DEDICATED[name];
  if (Dedicated) return <Dedicated />;
  if (error) return <p class="error">{error}</p>;
  if (data === undefined) return <p class="muted">…</p>;
  return <Readable value={data} />;
}
