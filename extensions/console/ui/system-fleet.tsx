/**
 * The fleet's daemons in the System view (docs/fleet.md): `GET /fleet` says whether this daemon is in a fleet
 * at all (the panel then says the fleet is off), `GET /fleet/daemons` lists every daemon: alive or down (its
 * heartbeat), whether it takes new agents (drained or not), how far its replication lags, and its agents, each a
 * link to the agent's view (any daemon of the fleet answers for any agent). Drain and undrain from its row.
 * No event tells of another daemon's heartbeat or drain, so besides the agents' events it reloads every 5 s
 * while shown, and on Refresh.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, client, type FleetDaemon } from './api.js';
import { errorText, useLive } from './util.js';
import { relative, Term, type Tone } from './words.js';

const POLL_MS = 5_000;
/** Agent names shown per daemon; the rest are counted. */
const SHOWN_AGENTS = 12;

const changed = (type: string) => type === 'agent.loaded' || type === 'agent.unloaded';

type Loaded =
  | { off: 'extension' | 'settings'; raw: string }
  | { off: false; fleet: string; ttlSeconds: number; daemons: FleetDaemon[] | null; problem: string | null };

async function load(): Promise<Loaded> {
  const status = await client.fleet().catch((e: unknown) => {
    // The extension itself off: its prefix answers 503 `unavailable`.
    if (e instanceof ApiError && e.status === 503) return { off: e.message };
    throw e;
  });
  if ('off' in status) return { off: 'extension', raw: status.off };
  if (!status.configured) return { off: 'settings', raw: 'configured: false' };
  const list = await client.fleetDaemons().catch((e: unknown) => errorText(e));
  return {
    off: false,
    fleet: status.fleet ?? '',
    ttlSeconds: status.ttlSeconds,
    daemons: typeof list === 'string' ? null : list.daemons,
    problem: typeof list === 'string' ? list : null,
  };
}

const plural = (n: number, word: string) => `${n === 0 ? 'no' : n} ${word}${n === 1 ? '' : 's'}`;
const seconds = (ms: number) => (ms < 10_000 ? (ms / 1000).toFixed(1) : String(Math.round(ms / 1000)));

function Replication({ daemon, ttlSeconds }: { daemon: FleetDaemon; ttlSeconds: number }) {
  const r = daemon.replication;
  const [word, tone, raw]: [string, Tone, string] = !r
    ? ['Not known', 'off', 'not reported (down, or an older daemon)']
    : !r.enabled
      ? ['Not replicated', 'off', 'replicate: false']
      : r.lagMs === undefined
        ? ['Replicated', 'ok', 'replicate: true']
        : r.lagMs < 1000
          ? ['Up to date', 'ok', `lagMs: ${r.lagMs}`]
          : [`${seconds(r.lagMs)} s behind`, r.lagMs > ttlSeconds * 1000 ? 'error' : 'wait', `lagMs: ${r.lagMs}`];
  return <Term word={word} raw={raw} tone={tone} />;
}

function Agents({ daemon }: { daemon: FleetDaemon }) {
  const shown = daemon.agents.slice(0, SHOWN_AGENTS);
  const more = daemon.agents.length - shown.length;
  return (
    <>
      <span class="muted">{plural(daemon.agents.length, 'agent')}</span>
      {shown.length > 0 && (
        <ul class="inline-list" aria-label={`Agents on ${daemon.name}`}>
          {shown.map((agent) => (
            <li key={agent.agentId}>
              <a href={`#/agent/${encodeURIComponent(agent.agentId)}`}>{agent.name}</a>
            </li>
          ))}
          {more > 0 && <li class="muted">and {more} more</li>}
        </ul>
      )}
    </>
  );
}

/** Drain (after a confirmation naming where its agents go) or undrain one daemon. */
function Actions({ daemon, all, done }: { daemon: FleetDaemon; all: FleetDaemon[]; done: (text: string) => void }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const run = (work: Promise<string>) => {
    setBusy(true);
    work.then(done, (e) => done(errorText(e))).finally(() => (setBusy(false), setAsking(false)));
  };
  if (daemon.draining)
    return (
      <button
        type="button"
        class="small"
        disabled={busy}
        aria-label={`Let ${daemon.name} take new agents again`}
        onClick={() =>
          run(
            client
              .undrain(daemon.name)
              .then((r) => (r.undrained ? `${r.daemon} takes new agents again.` : `${r.daemon} was not drained.`)),
          )
        }
      >
        Undrain
      </button>
    );
  const to = all.filter((other) => other.name !== daemon.name && other.alive && !other.draining).map((d) => d.name);
  if (!asking)
    return (
      <button
        type="button"
        class="small"
        disabled={to.length === 0}
        title={to.length === 0 ? 'No other daemon alive can take its agents' : undefined}
        aria-label={`Drain ${daemon.name}`}
        onClick={() => setAsking(true)}
      >
        Drain…
      </button>
    );
  return (
    <div class="stack">
      <span>
        Move {plural(daemon.agents.length, 'agent')} to {to.join(', ')}; {daemon.name} then takes no new agents until
        undrained.
      </span>
      <div class="row">
        <button
          type="button"
          class="small danger"
          disabled={busy}
          onClick={() =>
            run(
              client
                .drain(daemon.name, to)
                .then(
                  (r) =>
                    `Drained ${r.daemon}: ${plural(r.moved.length, 'agent')} moved${r.failed.length ? `, ${r.failed.length} could not move (${r.failed.map((f) => f.error).join('; ')})` : ''}.`,
                ),
            )
          }
        >
          Drain {daemon.name}
        </button>
        <button type="button" class="small" onClick={() => setAsking(false)}>
          Cancel
        </button>
      </div>
    </div>
  );
}

function Daemons({ data, say }: { data: Extract<Loaded, { off: false }>; say: (text: string) => void }) {
  const daemons = data.daemons ?? [];
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={`Daemons of the fleet ${data.fleet}`}>
      <table class="fleet-daemons stacked">
        <thead>
          <tr>
            <th scope="col">Daemon</th>
            <th scope="col">Heartbeat</th>
            <th scope="col">New agents</th>
            <th scope="col">Replication</th>
            <th scope="col">Agents</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {daemons.map((d) => (
            <tr key={d.name} data-daemon={d.name}>
              <th scope="row">
                {d.name}
                {d.self && <span class="muted"> (this one)</span>}
              </th>
              <td>
                <Term
                  word={d.alive ? 'Alive' : 'Down'}
                  raw={
                    d.heartbeatAt === null
                      ? 'no heartbeat in the members bucket'
                      : `heartbeat: ${new Date(d.heartbeatAt).toISOString()}`
                  }
                  tone={d.alive ? 'ok' : 'error'}
                />
                {d.heartbeatAt !== null && <span class="muted sub"> {relative(d.heartbeatAt)}</span>}
              </td>
              <td>
                <Term
                  word={d.draining ? 'Drained' : 'Takes agents'}
                  raw={`draining: ${d.draining}${d.drainTo.length > 0 ? `, drainTo: ${d.drainTo.join(', ')}` : ''}`}
                  tone={d.draining ? 'wait' : 'ok'}
                />
                {d.draining && (
                  <span class="muted sub">
                    {d.drainTo.length > 0 ? ` to ${d.drainTo.join(', ')}` : ''}
                    {d.drainedSince ? `, since ${relative(d.drainedSince)}` : ''}
                  </span>
                )}
              </td>
              <td>
                <span class="narrow-label">replication </span>
                <Replication daemon={d} ttlSeconds={data.ttlSeconds} />
              </td>
              <td class="agents">
                <Agents daemon={d} />
              </td>
              <td>
                <Actions daemon={d} all={daemons} done={say} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function FleetDaemons() {
  const { data, error, reload } = useLive(load, changed);
  const [message, setMessage] = useState('');
  useEffect(() => {
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, []);
  const say = (text: string) => (setMessage(text), reload());
  const alive = data && !data.off ? (data.daemons ?? []).filter((d) => d.alive).length : 0;
  return (
    <section aria-labelledby="fleet-daemons-title" class="panel" data-panel="fleet-daemons">
      <div class="head-row">
        <h2 id="fleet-daemons-title">Fleet daemons</h2>
        {data &&
          (data.off ? (
            <Term word="Off" raw={data.raw} tone="off" />
          ) : (
            <Term
              word={data.problem ? 'Not connected' : `${alive} of ${data.daemons!.length} alive`}
              raw={`fleet: ${data.fleet}${data.problem ? `, ${data.problem}` : ''}`}
              tone={data.problem ? 'error' : alive === data.daemons!.length ? 'ok' : 'wait'}
            />
          ))}
      </div>
      {error && <p class="error">{error}</p>}
      {!data && !error && <p class="muted">…</p>}
      {data?.off && (
        <p class="muted">
          The fleet is off: this daemon runs alone. To join one,{' '}
          {data.off === 'extension' ? 'turn the fleet extension on (below), set ' : 'set '}
          <code>fleet</code> in the settings (its NATS servers and names) and restart the daemon.
        </p>
      )}
      {data && !data.off && (
        <>
          <div class="row">
            <span class="muted spacer">
              Fleet <strong>{data.fleet}</strong>. A daemon is down once {data.ttlSeconds} s pass without its heartbeat;
              a drained one takes no new agents.
            </span>
            <button type="button" class="small" onClick={reload}>
              Refresh<span class="sr-only"> fleet daemons</span>
            </button>
          </div>
          {data.problem ? <p class="error">{data.problem}</p> : <Daemons data={data} say={say} />}
        </>
      )}
      {message && <p role="status">{message}</p>}
    </section>
  );
}
