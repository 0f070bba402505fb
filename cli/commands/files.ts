/**
 * `agt files …`: an agent's stored files (docs/agent-files.md). `cat` writes the stored bytes; `put` sends base64 so
 * any file travels.
 */
import { readFileSync } from 'node:fs';
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { readStdin } from './args.js';

const content = (agent: string, path: string, extra = '') =>
  `/agents/${seg(agent)}/files/content?path=${encodeURIComponent(path)}${extra}`;

export async function list(ctx: Ctx, agent: string, prefix: string | undefined): Promise<void> {
  const answer = await ctx.client.get<{
    agentId: string;
    files: Array<{ path: string; size: number; mime_type: string | null; protection: string; updated_at: number }>;
  }>(`/agents/${seg(agent)}/files${prefix ? `?prefix=${encodeURIComponent(prefix)}` : ''}`);
  ctx.out.result(answer, () => {
    const { out } = ctx;
    if (answer.files.length === 0) return out.line(out.dim('no files'));
    out.table(
      ['PATH', 'SIZE', 'TYPE', 'PROTECTION', 'UPDATED'],
      answer.files.map((f) => [
        out.bold(f.path),
        String(f.size),
        f.mime_type ?? '-',
        f.protection,
        new Date(f.updated_at).toISOString().slice(0, 19).replace('T', ' '),
      ]),
    );
  });
}

export async function cat(ctx: Ctx, agent: string, path: string): Promise<void> {
  if (ctx.out.json) return ctx.out.printJson(await ctx.client.get(content(agent, path)));
  const answer = await ctx.client.get<{ content: string }>(content(agent, path, '&encoding=base64'));
  process.stdout.write(Buffer.from(answer.content, 'base64'));
}

export async function put(
  ctx: Ctx,
  agent: string,
  path: string,
  local: string | undefined,
  options: { readonly?: boolean; mime?: string },
): Promise<void> {
  const bytes = local && local !== '-' ? readFileSync(local) : await readStdin();
  const body = {
    content: bytes.toString('base64'),
    encoding: 'base64',
    ...(options.mime ? { mime_type: options.mime } : {}),
    ...(options.readonly ? { protection: 'readonly' } : {}),
  };
  const answer = await ctx.client.request('PUT', content(agent, path), body);
  ctx.out.result(answer, () => ctx.out.line(`stored ${path} (${bytes.length} bytes)`));
}

export async function remove(ctx: Ctx, agent: string, path: string): Promise<void> {
  const answer = await ctx.client.request('DELETE', content(agent, path));
  ctx.out.result(answer, () => ctx.out.line(`deleted ${path}`));
}

export async function move(ctx: Ctx, agent: string, from: string, to: string): Promise<void> {
  const answer = await ctx.client.post(`/agents/${seg(agent)}/files/rename`, { from, to });
  ctx.out.result(answer, () => ctx.out.line(`renamed ${from} to ${to}`));
}
