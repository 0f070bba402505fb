/**
 * `agt fleet status`: the daemon's place in its fleet, the fleet's daemons (alive, drained, agents, replication
 * lag) and where each agent of the fleet runs (docs/fleet.md).
 */
import type { Ctx } from '../context.js';

/** `GET /fleet`, the fields read here. */
export interface FleetStatus {
  configured: boolean;
  fleet: string | null;
  daemon: string | null;
  connected: boolean;
  problem: string | null;
  ttlSeconds: number;
  draining: boolean;
  drainTo: string[];
  replication?: { enabled: boolean; lagMs?: number; uploads?: number; bytes?: number; failures?: number };
}

/** `GET /fleet/agents`. */
export interface FleetPlacements {
  agents: Array<{ agentId: string; name: string; handle: string | null; daemon: string; since: number }>;
}

/** `GET /fleet/daemons`, the fields read here. */
export interface FleetDaemons {
  daemons: Array<{
    name: string;
    alive: boolean;
    draining: boolean;
    agents: unknown[];
    replication: { enabled: boolean; lagMs?: number } | null;
  }>;
}

export async function status(ctx: Ctx): Promise<void> {
  const self = await ctx.client.get<FleetStatus>('/fleet');
  const reachable = self.configured && self.connected;
  const [placed, members] = reachable
    ? await Promise.all([
        ctx.client.get<FleetPlacements>('/fleet/agents'),
        ctx.client.get<FleetDaemons>('/fleet/daemons'),
      ])
    : [null, null];
  ctx.out.result({ ...self, daemons: members?.daemons ?? null, agents: placed?.agents ?? null }, () => {
    if (!self.configured) return ctx.out.line('not in a fleet (settings `fleet` are not set; docs/fleet.md)');
    ctx.out.line(`fleet ${self.fleet}, daemon ${self.daemon}, placements expire after ${self.ttlSeconds} s`);
    if (self.draining)
      ctx.out.line(
        ctx.out.yellow(
          `daemon ${self.daemon} is drained: it takes no new agent${self.drainTo.length > 0 ? ` (${self.drainTo.join(', ')} can)` : ''}; agt fleet undrain ${self.daemon} ends that`,
        ),
      );
    if (!self.connected)
      return ctx.out.line(ctx.out.yellow(`NATS not reachable${self.problem ? `: ${self.problem}` : ''}`));
    const replication = self.replication;
    if (replication?.enabled) {
      const lag = replication.lagMs ?? 0;
      const line = `agent files replicated: lag ${lag} ms, ${replication.uploads ?? 0} copies stored (${replication.bytes ?? 0} bytes)${replication.failures ? `, ${replication.failures} attempts failed` : ''}`;
      ctx.out.line(lag > 5_000 ? ctx.out.yellow(line) : line);
    } else if (replication) ctx.out.line(ctx.out.dim('agent files not replicated (option replicate is off)'));
    const lagOf = (daemon: FleetDaemons['daemons'][number]) =>
      !daemon.replication ? 'unknown' : daemon.replication.enabled ? `${daemon.replication.lagMs ?? 0} ms` : 'off';
    ctx.out.table(
      ['DAEMON', 'STATE', 'TAKES AGENTS', 'AGENTS', 'REPLICATION LAG'],
      (members?.daemons ?? []).map((daemon) => [
        daemon.name,
        daemon.alive ? 'alive' : ctx.out.yellow('down'),
        daemon.draining ? ctx.out.yellow('no (drained)') : 'yes',
        String(daemon.agents.length),
        lagOf(daemon),
      ]),
    );
    const agents = [...(placed?.agents ?? [])].sort(
      (a, b) => a.daemon.localeCompare(b.daemon) || a.name.localeCompare(b.name),
    );
    if (agents.length === 0) return ctx.out.line(ctx.out.dim('no agent runs in the fleet'));
    ctx.out.table(
      ['DAEMON', 'AGENT', 'ID', 'SINCE'],
      agents.map((agent) => [agent.daemon, agent.name, agent.agentId, new Date(agent.since).toISOString()]),
    );
  });
}

export async function move(ctx: Ctx, agent: string, daemon: string): Promise<void> {
  const view = await ctx.client.post<{ agentId: string; from: string; to: string; moved: boolean }>('/fleet/move', {
    agent,
    daemon,
  });
  ctx.out.result(view, () =>
    ctx.out.line(view.moved ? `${agent} moved from ${view.from} to ${view.to}` : `${agent} runs on ${view.to} already`),
  );
}

export async function drain(ctx: Ctx, daemon: string, options: { to: string }): Promise<void> {
  const to = options.to
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const view = await ctx.client.post<{
    moved: Array<{ agentId: string; to: string }>;
    failed: Array<{ agentId: string; error: string }>;
  }>('/fleet/drain', { daemon, to });
  ctx.out.result(view, () => {
    for (const entry of view.moved) ctx.out.line(`${entry.agentId} -> ${entry.to}`);
    for (const entry of view.failed) ctx.out.line(ctx.out.yellow(`${entry.agentId} stays: ${entry.error}`));
    if (view.moved.length === 0 && view.failed.length === 0) ctx.out.line(ctx.out.dim(`${daemon} runs no agent`));
  });
  if (view.failed.length > 0) process.exitCode = 1;
}

export async function undrain(ctx: Ctx, daemon: string): Promise<void> {
  const view = await ctx.client.post<{ daemon: string; undrained: boolean }>('/fleet/undrain', { daemon });
  ctx.out.result(view, () =>
    ctx.out.line(view.undrained ? `${daemon} takes new agents again` : `${daemon} was not drained`),
  );
}
