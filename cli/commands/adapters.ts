/** `agt adapters …`: the channels extension's routes (`/channels`, `/agents/{id}/adapters`). */
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { ago } from '../output.js';
import { integer, jsonObject } from './args.js';

export interface AdapterReport {
  type: string;
  enabled: boolean;
  status: string;
  error?: string;
  connectedAt?: number;
  restartCount: number;
  recentErrors: Array<{ at: number; message: string }>;
}

/** `GET /agents/{id}/adapters`. */
export interface AgentAdapters {
  agentId: string;
  adapters: AdapterReport[];
}

/** `GET /channels/`, the fields read here. */
export interface ChannelsOverview {
  types: Array<{ type: string; credentials: string[]; maxTextLength: number }>;
  agents: Array<{ name: string; adapters: Array<{ type: string; enabled: boolean; status: string }> }>;
}

function paint(ctx: Ctx, status: string): string {
  const { out } = ctx;
  return status === 'connected'
    ? out.green(status)
    : status === 'error'
      ? out.red(status)
      : status === 'connecting'
        ? out.yellow(status)
        : status;
}

function printReports(ctx: Ctx, adapters: AdapterReport[], errors: boolean): void {
  const { out } = ctx;
  if (adapters.length === 0) return out.line(out.dim('no adapters (agt adapters set <agent> <type>)'));
  out.table(
    ['TYPE', 'ENABLED', 'STATUS', 'UP', 'RESTARTS', 'ERROR'],
    adapters.map((a) => [
      out.bold(a.type),
      a.enabled ? 'yes' : 'no',
      paint(ctx, a.status),
      a.connectedAt ? ago(Date.now() - a.connectedAt) : '-',
      String(a.restartCount),
      a.error ?? '',
    ]),
  );
  if (!errors) return;
  for (const a of adapters.filter((a) => a.recentErrors.length)) {
    out.line();
    out.line(out.dim(`${a.type}, recent failures:`));
    for (const e of a.recentErrors)
      out.line(`  ${new Date(e.at).toISOString().slice(0, 19).replace('T', ' ')} ${e.message}`);
  }
}

export async function list(ctx: Ctx, agent: string | undefined): Promise<void> {
  if (agent) return status(ctx, agent, undefined);
  const answer = await ctx.client.get<ChannelsOverview>('/channels/');
  ctx.out.result(answer, () => {
    const { out } = ctx;
    out.table(
      ['TYPE', 'CREDENTIALS (agt credentials set <agent> <name>)'],
      answer.types.map((t) => [out.bold(t.type), t.credentials.join(', ') || '-']),
    );
    out.line();
    if (answer.agents.length === 0) return out.line(out.dim('no agent has adapters'));
    out.table(
      ['AGENT', 'ADAPTERS'],
      answer.agents.map((a) => [
        out.bold(a.name),
        a.adapters.map((x) => `${x.type} ${x.enabled ? paint(ctx, x.status) : 'off'}`).join(', '),
      ]),
    );
  });
}

export async function status(ctx: Ctx, agent: string, type: string | undefined): Promise<void> {
  const answer = await ctx.client.get<AgentAdapters>(`/agents/${seg(agent)}/adapters`);
  const adapters = type ? answer.adapters.filter((a) => a.type === type) : answer.adapters;
  ctx.out.result({ agentId: answer.agentId, adapters }, () => printReports(ctx, adapters, true));
}

export async function set(
  ctx: Ctx,
  agent: string,
  type: string,
  options: { config?: string; set?: string[]; policy?: string; maxAttachmentSize?: string; disable?: boolean },
): Promise<void> {
  // The route replaces the adapter's whole entry: start from what the agent has, so a flag changes one thing.
  const current = await ctx.client.get<{ config: { adapters?: Record<string, Record<string, any>> } }>(
    `/agents/${seg(agent)}/config`,
  );
  const before = current.config.adapters?.[type] ?? {};
  const config: Record<string, unknown> = {
    ...(before.config ?? {}),
    ...(options.config ? jsonObject(options.config, '--config') : {}),
  };
  for (const assignment of options.set ?? []) {
    const at = assignment.indexOf('=');
    if (at <= 0) throw new CliError(`--set takes key=value, got "${assignment}"`, EXIT.usage);
    const raw = assignment.slice(at + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // Not JSON: the text itself.
    }
    config[assignment.slice(0, at)] = value;
  }
  const body: Record<string, unknown> = { enabled: !options.disable, config };
  const policy = options.policy ? jsonObject(options.policy, '--policy') : before.policy;
  if (policy) body.policy = policy;
  const max = integer(options.maxAttachmentSize, '--max-attachment-size', 0);
  if (max !== undefined) body.limits = { ...(before.limits ?? {}), max_attachment_size: max };
  else if (before.limits) body.limits = before.limits;
  const answer = await ctx.client.request('PUT', `/agents/${seg(agent)}/adapters/${seg(type)}`, body);
  ctx.out.result(answer, () => printReports(ctx, [answer.adapter], true));
}

export async function remove(ctx: Ctx, agent: string, type: string): Promise<number | void> {
  const answer = await ctx.client.request('DELETE', `/agents/${seg(agent)}/adapters/${seg(type)}`);
  ctx.out.result(answer, () =>
    ctx.out.line(answer.success ? `removed the ${type} adapter` : `${agent} has no ${type} adapter`),
  );
  return answer.success ? undefined : EXIT.failed;
}

export async function restart(ctx: Ctx, agent: string, type: string): Promise<void> {
  const answer = await ctx.client.post(`/agents/${seg(agent)}/adapters/${seg(type)}/restart`);
  ctx.out.result(answer, () => printReports(ctx, [answer.adapter], true));
}
