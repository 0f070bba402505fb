/** `agt create`, `agt start|stop|load`, `agt config` (show, or change with a merge patch). */
import { resolve } from 'node:path';
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';

export async function create(
  ctx: Ctx,
  name: string | undefined,
  options: { dir?: string; template?: string; provider?: string; model?: string; start?: boolean },
): Promise<void> {
  const body: Record<string, unknown> = {};
  if (name) body.name = name;
  if (options.dir) body.directory = resolve(options.dir);
  if (options.template) body.template = options.template;
  if (options.provider) body.provider = options.provider;
  if (options.model) body.model = options.model;
  if (options.start) body.start = true;
  const created = await ctx.client.post('/agents/create', body);
  ctx.out.result(created, () => {
    ctx.out.line(`created ${ctx.out.bold(created.name)} (${created.agentId})${created.started ? ', started' : ''}`);
    ctx.out.line(ctx.out.dim(`file ${created.filePath}`));
    ctx.out.line(ctx.out.dim(`chat with it: agt chat ${created.name}`));
  });
}

export async function start(ctx: Ctx, agent: string): Promise<void> {
  // A path is made absolute here: the daemon resolves relative paths against its own folder.
  const id = agent.endsWith('.agt') ? resolve(agent) : agent;
  const started = await ctx.client.post(`/agents/${seg(id)}/start`);
  ctx.out.result(started, () =>
    ctx.out.line(
      `started ${started.agent?.name ?? agent}${started.loaded ? ' (loaded)' : ''}${started.startupTriggered ? ', startup trigger fired' : ''}`,
    ),
  );
}

export async function stop(ctx: Ctx, agent: string): Promise<void> {
  const stopped = await ctx.client.post(`/agents/${seg(agent)}/stop`);
  ctx.out.result(stopped, () => ctx.out.line(`stopped ${agent}`));
}

export async function load(ctx: Ctx, file: string, options: { requireReview?: boolean }): Promise<void> {
  const loaded = await ctx.client.post('/agents/load', {
    filePath: resolve(file),
    ...(options.requireReview ? { requireReview: true } : {}),
  });
  ctx.out.result(loaded, () => ctx.out.line(`loaded ${ctx.out.bold(loaded.config?.name ?? file)} (${loaded.id})`));
}

export async function config(ctx: Ctx, agent: string, options: { set?: string[]; patch?: string }): Promise<void> {
  if (!options.set?.length && !options.patch) {
    const current = await ctx.client.get(`/agents/${seg(agent)}/config`);
    return ctx.out.printJson(current.config);
  }
  let patch: Record<string, unknown> = {};
  if (options.patch) {
    try {
      patch = JSON.parse(options.patch);
    } catch {
      throw new CliError('--patch must be a JSON object (a JSON Merge Patch of the config)', EXIT.usage);
    }
  }
  for (const assignment of options.set ?? []) {
    const at = assignment.indexOf('=');
    if (at <= 0) throw new CliError(`--set takes key.path=value, got "${assignment}"`, EXIT.usage);
    const path = assignment.slice(0, at).split('.');
    const raw = assignment.slice(at + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // Not JSON: the text itself.
    }
    let into = patch;
    for (const key of path.slice(0, -1)) into = (into[key] ??= {}) as Record<string, unknown>;
    into[path.at(-1)!] = value;
  }
  const changed = await ctx.client.request('PATCH', `/agents/${seg(agent)}/config`, patch);
  ctx.out.result(changed, () => ctx.out.line(`updated the config of ${agent}`));
}
