/**
 * What a running extension holds, as readable lists: the MCP registrations and each open server with its
 * state and its tools (from the agent's tool list, `source: "mcp:<server>"`), the mesh server with its
 * peers and each mesh agent's outbox, and for the others (channel adapters with their status or error,
 * compute engine and containers, tracked folders) what `GET` on the prefix answers.
 */
import { useEffect, useState } from 'preact/hooks';
import { client, type McpServerInfo } from './api.js';
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

/** Outbox rows of one agent, counted by status. */
function Outbox({ agentId }: { agentId: string }) {
  const { data, error } = useLoad(() => client.outbox(agentId), [agentId]);
  if (error) return <span class="muted">{error}</span>;
  const rows: Array<{ status?: string }> = Array.isArray(data) ? data : ((data as any)?.messages ?? []);
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.status ?? 'unknown', (counts.get(row.status ?? 'unknown') ?? 0) + 1);
  return <>{rows.length === 0 ? 'empty' : [...counts].map(([status, n]) => `${n} ${status}`).join(', ')}</>;
}

function Mesh({ index }: { index: any }) {
  const { data: peers, error } = useLoad(() => client.peers(), []);
  const agents: Array<{ agentId: string; handle?: string }> = index?.agents ?? [];
  return (
    <>
      <Readable value={index?.mesh} />
      <h3>Agents and their outbox</h3>
      {agents.length === 0 ? (
        <p class="muted">none</p>
      ) : (
        <ul>
          {agents.map((a) => (
            <li key={a.agentId}>
              {a.handle ?? a.agentId}: outbox <Outbox agentId={a.agentId} />
            </li>
          ))}
        </ul>
      )}
      <h3>Peers</h3>
      {error ? <p class="muted">{error}</p> : <Readable value={peers?.peers} />}
    </>
  );
}

export function ExtensionState({ name, prefix }: { name: string; prefix: string }) {
  const { data, error } = useLoad(
    () => (name === 'mcp' ? Promise.resolve(null) : client.extensionIndex(prefix)),
    [name, prefix],
  );
  if (name === 'mcp') return <Mcp />;
  if (error) return <p class="error">{error}</p>;
  if (data === undefined) return <p class="muted">…</p>;
  if (name === 'mesh') return <Mesh index={data} />;
  return <Readable value={data} />;
}
