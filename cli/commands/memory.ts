/**
 * `agt memory …`: an agent's long-term memory (docs/memory.md): list, search, add, forget, pin, consolidate, changelog.
 */
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { readStdin } from './args.js';

/** One memory as `agt memory` reads it (test/http-api-views.ts checks it against the route). */
export interface MemoryView {
  id: number;
  text: string;
  kind: string;
  source: string;
  pinned: boolean;
  created_at: string;
  forgotten_at: string | null;
}

/** `GET /agents/{id}/memory` as `agt memory ls|search` reads it. */
export interface MemoryListing {
  agentId: string;
  status: {
    live: number;
    forgotten: number;
    pinned: number;
    embeddings: { configured: boolean; model: string | null; embedded: number; pending: number };
  };
  memories: MemoryView[];
  hits?: Array<{ memory: MemoryView; score: number }>;
  mode?: string;
  note?: string;
}

const base = (agent: string) => `/agents/${seg(agent)}/memory`;
const oneLine = (text: string, max = 90) => {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

function print(ctx: Ctx, memories: MemoryView[]): void {
  const { out } = ctx;
  if (memories.length === 0) return out.line(out.dim('no memories'));
  out.table(
    ['ID', 'KIND', 'SOURCE', 'SAVED', 'TEXT'],
    memories.map((m) => [
      out.bold(String(m.id)) + (m.pinned ? ' *' : ''),
      m.kind,
      m.source,
      m.created_at.slice(0, 10),
      oneLine(m.text),
    ]),
  );
}

export async function list(
  ctx: Ctx,
  agent: string,
  options: { kind?: string; pinned?: boolean; forgotten?: boolean; limit?: string },
): Promise<void> {
  const query = new URLSearchParams();
  if (options.kind) query.set('kind', options.kind);
  if (options.pinned) query.set('pinned', 'true');
  if (options.forgotten) query.set('forgotten', 'true');
  if (options.limit) query.set('limit', options.limit);
  const answer = await ctx.client.get<MemoryListing>(`${base(agent)}${query.size ? `?${query}` : ''}`);
  ctx.out.result(answer, () => {
    const { status } = answer;
    const embeddings = status.embeddings.configured
      ? `embeddings ${status.embeddings.model ?? 'starting'}, ${status.embeddings.pending} pending`
      : 'full-text only (no settings memory.embeddings)';
    ctx.out.line(
      ctx.out.dim(`${status.live} memories, ${status.pinned} pinned (*), ${status.forgotten} forgotten; ${embeddings}`),
    );
    print(ctx, answer.memories);
  });
}

export async function search(ctx: Ctx, agent: string, query: string, options: { limit?: string }): Promise<void> {
  const answer = await ctx.client.get<MemoryListing>(
    `${base(agent)}?q=${encodeURIComponent(query)}${options.limit ? `&limit=${encodeURIComponent(options.limit)}` : ''}`,
  );
  ctx.out.result(answer, () => {
    if (answer.note) ctx.out.note(answer.note);
    print(ctx, answer.memories);
  });
}

/** `POST /agents/{id}/memory` as `agt memory add` reads it. */
export interface SavedMemory {
  memory: MemoryView;
}

export async function add(
  ctx: Ctx,
  agent: string,
  text: string | undefined,
  options: { kind?: string; pin?: boolean },
): Promise<void> {
  const body = {
    text: text === undefined || text === '-' ? (await readStdin()).toString('utf8').replace(/\n$/, '') : text,
    ...(options.kind ? { kind: options.kind } : {}),
    ...(options.pin ? { pinned: true } : {}),
  };
  const answer = await ctx.client.post<SavedMemory>(base(agent), body);
  ctx.out.result(answer, () => ctx.out.line(`saved memory ${answer.memory.id}`));
}

export async function remove(ctx: Ctx, agent: string, id: string, options: { purge?: boolean }): Promise<void> {
  const answer = await ctx.client.request('DELETE', `${base(agent)}/${seg(id)}${options.purge ? '?purge=true' : ''}`);
  ctx.out.result(answer, () =>
    ctx.out.line(
      options.purge
        ? `deleted memory ${id}`
        : `forgot memory ${id} (kept as forgotten for 30 days; --purge deletes at once)`,
    ),
  );
}

export async function pin(ctx: Ctx, agent: string, id: string, pinned: boolean): Promise<void> {
  const answer = await ctx.client.request('PATCH', `${base(agent)}/${seg(id)}`, { pinned });
  ctx.out.result(answer, () => ctx.out.line(`${pinned ? 'pinned' : 'unpinned'} memory ${id}`));
}

/** One changelog row as `agt memory changelog|consolidate` reads it (test/http-api-views.ts checks it). */
export interface MemoryChangeView {
  id: number;
  run_id: string;
  action: string;
  memory_id: number | null;
  from_ids: number[];
  reason: string;
  created_at: string;
}

/** `GET /agents/{id}/memory/changelog` as `agt memory changelog` reads it. */
export interface MemoryChangelogView {
  agentId: string;
  changes: MemoryChangeView[];
}

function printChanges(ctx: Ctx, changes: MemoryChangeView[]): void {
  const { out } = ctx;
  if (changes.length === 0) return out.line(out.dim('no changes'));
  out.table(
    ['WHEN', 'ACTION', 'MEMORY', 'FROM', 'REASON'],
    changes.map((c) => [
      c.created_at.slice(0, 19).replace('T', ' '),
      c.action,
      c.memory_id === null ? '-' : String(c.memory_id),
      c.from_ids.join(',') || '-',
      oneLine(c.reason, 70),
    ]),
  );
}

export async function changelog(ctx: Ctx, agent: string, options: { limit?: string }): Promise<void> {
  const answer = await ctx.client.get<MemoryChangelogView>(
    `${base(agent)}/changelog${options.limit ? `?limit=${encodeURIComponent(options.limit)}` : ''}`,
  );
  ctx.out.result(answer, () => printChanges(ctx, answer.changes));
}

export async function consolidate(ctx: Ctx, agent: string): Promise<void> {
  const answer = await ctx.client.post<MemoryChangelogView & { offered: number }>(`${base(agent)}/consolidate`, {});
  ctx.out.result(answer, () => {
    ctx.out.line(ctx.out.dim(`${answer.offered} memories offered to the model`));
    printChanges(ctx, answer.changes);
  });
}
