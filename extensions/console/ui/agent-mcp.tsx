/**
 * The agent's MCP servers (`GET /agents/{id}/mcp`) in its view: each with its state in words and why, and its tool
 * count; for a registration whose OAuth sign-in is per agent (`oauth.signIn: per-agent`, docs/mcp.md "Per-agent
 * sign-in") this agent's own Sign in and Sign out (mcp-signin.tsx with the agent), which reconnect only this
 * agent's server. No event tells of a server's state, so the list is asked again every two seconds while shown.
 */
import { useEffect } from 'preact/hooks';
import { client } from './api.js';
import { McpSignIn } from './mcp-signin.js';
import { useLive } from './util.js';
import { Term, type Tone } from './words.js';

const POLL_MS = 2_000;

const STATUS: Record<string, [string, Tone]> = {
  connected: ['Connected', 'ok'],
  connecting: ['Connecting', 'busy'],
  error: ['Error', 'error'],
  skipped: ['Not started', 'wait'],
  stopped: ['Stopped', 'off'],
};

/** The registrations whose sign-in is per agent (`GET /mcp`). */
const perAgentSignIns = () =>
  client
    .mcp()
    .then(
      ({ registrations }) =>
        new Set(
          registrations
            .filter((r) => (r.oauth as { signIn?: string } | undefined)?.signIn === 'per-agent')
            .map((r) => r.name),
        ),
    );

export function AgentMcp({ id }: { id: string }) {
  const { data, error, reload } = useLive(
    () => client.agentMcp(id),
    (type, agent) => agent === id && (type === 'agent.config.changed' || type === 'mcp.tool.changed'),
    [id],
  );
  const perAgent = useLive(perAgentSignIns, (type) => type.startsWith('extension.')).data;
  useEffect(() => {
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, [id]);
  if (error) return <p class="muted">{error}</p>;
  if (!data) return <p class="muted">…</p>;
  if (data.servers.length === 0)
    return <p class="muted">This agent declares no MCP server (its config's mcp servers).</p>;
  return (
    <ul class="agent-mcp">
      {data.servers.map((server) => {
        const [word, tone] = STATUS[server.status] ?? [server.status, 'info' as Tone];
        return (
          <li key={server.name} data-mcp-server={server.name}>
            <strong>{server.name}</strong> <Term word={word} raw={server.status} tone={tone} />{' '}
            <span class="muted">
              {server.transport} · {server.toolCount} tool{server.toolCount === 1 ? '' : 's'}
            </span>
            {perAgent?.has(server.name) && <McpSignIn name={server.name} agent={id} />}
            {server.error && <p class="muted">{server.error}</p>}
          </li>
        );
      })}
    </ul>
  );
}
