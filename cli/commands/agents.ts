/** `agt rm`, `agt restart`, `agt inspect`, `agt history` and the not-loaded half of `agt ps -a`. */
import { resolve } from 'node:path';
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { compact } from '../output.js';
import { integer } from './args.js';

export interface TrackedAgent {
  filePath: string;
  id: string;
  name: string;
  handle: string | null;
  loaded: boolean;
  reviewed: boolean;
  autostart: boolean;
  passwordProtected: boolean;
}

/** The agent files of the tracked folders, or null when the tracked-folders extension is not there. */
export async function trackedAgents(ctx: Ctx): Promise<TrackedAgent[] | null> {
  try {
    return (await ctx.client.get<{ agents: TrackedAgent[] }>('/tracked-folders/agents')).agents;
  } catch (error) {
    if (error instanceof CliError && error.exitCode === EXIT.failed) return null;
    throw error;
  }
}

const isNotFound = (error: unknown) => error instanceof CliError && error.body?.code === 'not_found';

/** A loaded agent's reference; for one that is not loaded (a `.agt` path, or a tracked agent) it is loaded first. */
async function loadedRef(
  ctx: Ctx,
  agent: string,
): Promise<{ id: string; filePath: string | null; config: { name?: string } }> {
  try {
    return await ctx.client.get(`/agents/${seg(agent)}`);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    let filePath: string | undefined;
    if (agent.endsWith('.agt')) filePath = resolve(agent);
    else {
      const matches = ((await trackedAgents(ctx)) ?? []).filter(
        (a) => !a.loaded && [a.id, a.name, a.handle].includes(agent),
      );
      if (matches.length > 1)
        throw new CliError(
          `"${agent}" names ${matches.length} tracked agents; give the file: ${matches.map((a) => a.filePath).join(', ')}`,
          EXIT.failed,
        );
      filePath = matches[0]?.filePath;
    }
    if (!filePath) throw error;
    return ctx.client.post('/agents/load', { filePath });
  }
}

export async function rm(ctx: Ctx, agent: string, options: { yes?: boolean }): Promise<void> {
  const ref = await loadedRef(ctx, agent);
  const name = ref.config?.name ?? agent;
  if (!options.yes) {
    if (!process.stdin.isTTY || ctx.out.json)
      throw new CliError(`agt rm deletes ${ref.filePath}; confirm with --yes (no terminal to ask on)`, EXIT.usage);
    const { confirm } = await import('@inquirer/prompts');
    if (
      !(await confirm({ message: `Delete ${name} and its file ${ref.filePath}? There is no undo.`, default: false }))
    ) {
      ctx.out.note('nothing deleted');
      return;
    }
  }
  const removed = await ctx.client.request('DELETE', `/agents/${seg(ref.id)}`);
  ctx.out.result(removed, () => ctx.out.line(`deleted ${ctx.out.bold(name)} (${removed.filePath})`));
}

export async function restart(ctx: Ctx, agent: string): Promise<void> {
  const ref = await ctx.client.get(`/agents/${seg(agent)}`);
  if (!ref.filePath) throw new CliError(`agent ${agent} has no file to load it again from`, EXIT.failed);
  await ctx.client.post(`/agents/${seg(ref.id)}/stop`);
  const started = await ctx.client.post(`/agents/${seg(ref.filePath)}/start`);
  ctx.out.result(started, () =>
    ctx.out.line(
      `restarted ${started.agent?.name ?? agent}${started.startupTriggered ? ', startup trigger fired' : ''}`,
    ),
  );
}

/** An extension's part of the picture, or null when the extension (or its route) is not there. */
async function optional<T>(ctx: Ctx, path: string): Promise<T | null> {
  try {
    return await ctx.client.get<T>(path);
  } catch (error) {
    if (error instanceof CliError && error.exitCode === EXIT.failed) return null;
    throw error;
  }
}

export async function inspect(ctx: Ctx, agent: string): Promise<void> {
  const ref = await ctx.client.get(`/agents/${seg(agent)}`);
  const id = seg(ref.id);
  const [status, tools, adapters, mcp] = await Promise.all([
    ctx.client.get(`/agents/${id}/status`),
    ctx.client.get(`/agents/${id}/tools`),
    optional<{ adapters: Array<Record<string, any>> }>(ctx, `/agents/${id}/adapters`),
    optional<{ servers: Array<Record<string, any>> }>(ctx, `/agents/${id}/mcp`),
  ]);
  const body = {
    id: ref.id,
    filePath: ref.filePath,
    config: ref.config,
    capped: ref.capped,
    refused: ref.refused,
    status,
    tools: tools.tools,
    adapters: adapters?.adapters ?? null,
    mcpServers: mcp?.servers ?? null,
  };
  ctx.out.result(body, () => {
    const { out } = ctx;
    const model = ref.config?.model ? `${ref.config.model.provider ?? '?'}/${ref.config.model.model_id ?? '?'}` : '-';
    out.line(`${out.bold(ref.config?.name ?? agent)}  ${ref.id}`);
    out.line(`${out.bold('file')}      ${ref.filePath ?? '-'}`);
    out.line(
      `${out.bold('state')}     ${out.state(String(status.runtimeState))}${status.targetState ? ` → ${status.targetState}` : ''}${status.degraded ? out.yellow(` degraded: ${status.degraded}`) : ''}`,
    );
    out.line(`${out.bold('model')}     ${model}`);
    if (ref.capped?.length) out.line(`${out.bold('capped')}    ${compact(ref.capped, 200)}`);
    if (ref.refused?.length) out.line(`${out.bold('refused')}   ${out.red(compact(ref.refused, 200))}`);
    const enabled = (tools.tools as Array<{ name: string; enabled: boolean; restricted: boolean }>).filter(
      (t) => t.enabled,
    );
    out.line(
      `${out.bold('tools')}     ${enabled.map((t) => (t.restricted ? `${t.name}*` : t.name)).join(', ') || '-'}  ${out.dim('(* needs approval)')}`,
    );
    out.line(
      `${out.bold('adapters')}  ${adapters === null ? out.dim('channels extension not running') : adapters.adapters.map((a) => `${a.type} ${a.status}`).join(', ') || '-'}`,
    );
    out.line(
      `${out.bold('mcp')}       ${mcp === null ? out.dim('mcp extension not running') : mcp.servers.map((s) => `${s.name} ${s.status} (${s.toolCount} tools)`).join(', ') || '-'}`,
    );
    out.line(out.dim('the whole config: agt config <agent>; as JSON: agt inspect <agent> --json'));
  });
}

export interface LoopRow {
  id: number;
  role: string;
  kind: string;
  content: unknown;
  turn_id: string | null;
  created_at: number;
}

/** `GET /agents/{id}/loop`. */
export interface LoopPage {
  agentId: string;
  loop: string;
  total: number;
  offset: number;
  rows: LoopRow[];
}

/** A row as one readable entry (the same reading of `content` as the daemon's history). */
function rowText(row: LoopRow): string {
  const content = row.content as Record<string, unknown> | string | null;
  if (typeof content === 'string') return content;
  const parts: string[] = [];
  if (content && typeof content.text === 'string' && content.text) parts.push(content.text);
  if (content && Array.isArray(content.toolCalls))
    for (const call of content.toolCalls as Array<{ name: string; args: unknown }>)
      parts.push(`→ ${call.name} ${compact(call.args)}`);
  if (parts.length === 0 && content) parts.push(compact(content, 300));
  return parts.join('\n');
}

export async function history(
  ctx: Ctx,
  agent: string,
  options: { loop?: string; limit: string; page?: string },
): Promise<void> {
  const limit = integer(options.limit, '--limit')!;
  const page = integer(options.page, '--page');
  const query = new URLSearchParams({ limit: String(limit) });
  if (options.loop) query.set('loop', options.loop);
  if (page !== undefined) query.set('offset', String((page - 1) * limit));
  const answer = await ctx.client.get<LoopPage>(`/agents/${seg(agent)}/loop?${query}`);
  const pages = Math.max(1, Math.ceil(answer.total / limit));
  const current = Math.floor(answer.offset / limit) + 1;
  ctx.out.result({ ...answer, limit, page: current, pages }, () => {
    const { out } = ctx;
    if (answer.rows.length === 0)
      return out.line(
        out.dim(answer.total === 0 ? 'no conversation yet' : `page ${current} is past the end (${pages} pages)`),
      );
    for (const row of answer.rows) {
      const who =
        row.role === 'user'
          ? out.cyan('you')
          : row.role === 'assistant'
            ? out.green(row.kind === 'message' ? 'agent' : row.kind)
            : out.dim(`${row.role}${row.kind !== 'message' ? ` ${row.kind}` : ''}`);
      out.line(
        `${out.dim(new Date(row.created_at).toISOString().slice(0, 19).replace('T', ' '))} ${who}: ${rowText(row)}`,
      );
    }
    out.note(
      out.dim(
        `rows ${answer.offset + 1}-${answer.offset + answer.rows.length} of ${answer.total}, page ${current} of ${pages}${current > 1 ? `; older: agt history ${agent} --page ${current - 1}` : ''}`,
      ),
    );
  });
}

/** `agt ps -a`: the loaded agents and the tracked files not loaded. */
export async function notLoaded(ctx: Ctx): Promise<TrackedAgent[] | null> {
  const tracked = await trackedAgents(ctx);
  return tracked === null ? null : tracked.filter((a) => !a.loaded);
}
