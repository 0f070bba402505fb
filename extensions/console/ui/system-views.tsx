/**
 * Dedicated System panels for extensions whose state an operator watches: the channels' adapters with their
 * connection state and why (`GET /channels`, then `GET /agents/{id}/adapters` for the reasons), the compute
 * engine, its base image, what is missing to run commands and the containers (`GET /compute`), and the mesh
 * server, its agents with their outbox by status, and its peers (`GET /network`, `GET /network/peers`). None of
 * them has events of its own: each reloads when an agent loads, unloads or changes its config, or an extension
 * is reconfigured, and on Refresh.
 */
import { client } from './api.js';
import { useLive } from './util.js';
import { relative, Term, type Tone } from './words.js';

const changed = (type: string) =>
  type === 'agent.loaded' ||
  type === 'agent.unloaded' ||
  type === 'agent.config.changed' ||
  type.startsWith('extension.');
const Refresh = ({ reload, what }: { reload: () => void; what: string }) => (
  <button type="button" class="small" onClick={reload}>
    Refresh<span class="sr-only"> {what}</span>
  </button>
);

const ADAPTER: Record<string, [string, Tone]> = {
  connected: ['Connected', 'ok'],
  connecting: ['Connecting', 'busy'],
  disconnected: ['Disconnected', 'off'],
  error: ['Error', 'error'],
};
const badge = (table: Record<string, [string, Tone]>, raw: string) => {
  const [word, tone] = table[raw] ?? [raw, 'info' as Tone];
  return <Term word={word} raw={raw} tone={tone} />;
};

export function Channels() {
  const { data, error, reload } = useLive(async () => {
    const list = await client.channels();
    const using = list.agents.filter((a) => a.adapters.length > 0);
    const reports = await Promise.all(using.map((a) => client.agentAdapters(a.agentId).catch(() => null)));
    return { types: list.types, agents: using.map((a, i) => ({ ...a, reports: reports[i]?.adapters ?? [] })) };
  }, changed);
  if (error) return <p class="error">{error}</p>;
  if (!data) return <p class="muted">…</p>;
  const rows = data.agents.flatMap((a) =>
    a.adapters.map((adapter) => ({
      agent: a,
      adapter,
      report: a.reports.find((r) => r.type === adapter.type),
    })),
  );
  return (
    <>
      <p>
        Adapter types: {data.types.map((t) => t.type).join(', ') || 'none'}. <Refresh reload={reload} what="channels" />
      </p>
      {rows.length === 0 ? (
        <p class="muted">No agent uses a channel adapter.</p>
      ) : (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Channel adapters">
          <table class="adapters">
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Adapter</th>
                <th scope="col">Connection</th>
                <th scope="col">Why</th>
                <th scope="col">Connected</th>
                <th scope="col" class="num">
                  Restarts
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map(({ agent, adapter, report }) => (
                <tr key={`${agent.agentId}/${adapter.type}`} data-adapter={`${agent.name}/${adapter.type}`}>
                  <td>
                    <a href={`#/agent/${encodeURIComponent(agent.agentId)}`}>{agent.name}</a>
                  </td>
                  <td>{adapter.type}</td>
                  <td>{adapter.enabled ? badge(ADAPTER, adapter.status) : badge({ off: ['Off', 'off'] }, 'off')}</td>
                  <td>
                    {report?.error ??
                      (report?.recentErrors.length ? (
                        <span class="muted">last: {report.recentErrors[report.recentErrors.length - 1]!.message}</span>
                      ) : (
                        <span class="muted">—</span>
                      ))}
                  </td>
                  <td>{report?.connectedAt ? relative(report.connectedAt) : '—'}</td>
                  <td class="num">{report?.restartCount ?? 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

const MISSING: Record<string, string> = {
  engine: 'the container engine is not reachable',
  image: 'the base image is not built (POST /compute/setup builds it)',
  busybox: 'no static busybox on this machine to build the image from',
};

export function Compute() {
  const { data, error, reload } = useLive(() => client.compute(), changed);
  if (error) return <p class="error">{error}</p>;
  if (!data) return <p class="muted">…</p>;
  return (
    <>
      <dl class="readable">
        <div>
          <dt>Engine</dt>
          <dd>
            {data.engine.reachable
              ? badge({ up: ['Reachable', 'ok'] }, 'up')
              : badge({ down: ['Not reachable', 'error'] }, 'down')}{' '}
            {data.engine.version && <span class="muted">version {data.engine.version} · </span>}
            <code>{data.engine.host}</code>
          </dd>
        </div>
        <div>
          <dt>Base image</dt>
          <dd>
            <code>{data.image.name}</code> {data.image.present ? 'built' : 'not built'}
          </dd>
        </div>
        <div>
          <dt>Can run commands</dt>
          <dd>{data.missing.length === 0 ? 'yes' : `no: ${data.missing.map((m) => MISSING[m] ?? m).join('; ')}`}</dd>
        </div>
        <div>
          <dt>Limits per container</dt>
          <dd>
            {data.limits.memoryMb} MB, {data.limits.cpus} CPUs, {data.limits.pids} processes; commands time out after{' '}
            {data.limits.defaultTimeoutMs / 1000} s (at most {data.limits.maxTimeoutMs / 1000} s)
          </dd>
        </div>
      </dl>
      <h3>
        Containers <Refresh reload={reload} what="compute" />
      </h3>
      {data.containers.length === 0 ? (
        <p class="muted">none</p>
      ) : (
        <ul>
          {data.containers.map((c) => (
            <li key={c.id}>
              <strong>{c.name}</strong> {badge({ running: ['Running', 'ok'] }, c.running ? 'running' : c.state)}{' '}
              <span class="muted">
                {c.tier === 'shared' ? 'shared' : `isolated, agent ${c.agentId}`}
                {c.network ? ', with network' : ''}
              </span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** Outbox rows of one agent, counted by status. */
function Outbox({ agentId }: { agentId: string }) {
  const { data, error } = useLive(
    () => client.outbox(agentId),
    (type, agent) => type.startsWith('outbox.') && agent === agentId,
    [agentId],
  );
  if (error) return <span class="muted">{error}</span>;
  const rows: Array<{ status?: string }> = Array.isArray(data) ? data : ((data as any)?.messages ?? []);
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.status ?? 'unknown', (counts.get(row.status ?? 'unknown') ?? 0) + 1);
  return <>{rows.length === 0 ? 'empty' : [...counts].map(([status, n]) => `${n} ${status}`).join(', ')}</>;
}

export function Mesh() {
  const { data, error, reload } = useLive(() => Promise.all([client.network(), client.peers()]), changed);
  if (error) return <p class="error">{error}</p>;
  if (!data) return <p class="muted">…</p>;
  const [{ mesh, agents }, { peers }] = data;
  return (
    <>
      <p>
        Mesh server{' '}
        {mesh.running
          ? badge({ running: ['Running', 'ok'] }, 'running')
          : badge({ off: ['Off', 'off'], stopped: ['Not running', 'error'] }, mesh.enabled ? 'stopped' : 'off')}{' '}
        {mesh.urls.length > 0 && <code>{mesh.urls.join(', ')}</code>}
        {mesh.lan ? ' (on the LAN)' : ' (this machine only)'}
        {mesh.error && <span class="error"> {mesh.error}</span>}
      </p>
      <h3>Agents it serves and their outbox</h3>
      {agents.length === 0 ? (
        <p class="muted">none</p>
      ) : (
        <ul>
          {agents.map((a) => (
            <li key={a.agentId}>
              <a href={`#/agent/${encodeURIComponent(a.agentId)}`}>{a.handle}</a>{' '}
              <span class="muted">visible: {a.visibility}</span> · outbox <Outbox agentId={a.agentId} />
            </li>
          ))}
        </ul>
      )}
      <h3>
        Peers <Refresh reload={reload} what="mesh" />
      </h3>
      {peers.length === 0 ? (
        <p class="muted">No other daemon found (manual peers: setting meshPeers; the LAN by mDNS).</p>
      ) : (
        <ul class="peers">
          {peers.map((p) => (
            <li key={p.url}>
              <strong>{p.name}</strong> <code>{p.url}</code>{' '}
              <span class="muted">
                {p.source === 'mdns' ? 'found on the LAN' : 'manual'}
                {p.seenAt ? `, seen ${relative(p.seenAt)}` : ''}
              </span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
