/** `agt tracked …`, `agt daemon stop`, `agt exec`, `agt send`. */
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { openEvents, type AgtEvent } from '../stream.js';
import { jsonObject } from './args.js';

export interface Folder {
  path: string;
  exists: boolean;
  agentCount: number;
  truncated: boolean;
}

/** `GET /tracked-folders`. */
export interface FolderList {
  folders: Folder[];
  maxScanDepth: number;
}

export async function trackedList(ctx: Ctx): Promise<void> {
  const answer = await ctx.client.get<FolderList>('/tracked-folders');
  ctx.out.result(answer, () => {
    const { out } = ctx;
    if (answer.folders.length === 0) return out.line(out.dim('no tracked folders (agt tracked add <folder>)'));
    out.table(
      ['FOLDER', 'EXISTS', 'AGENTS'],
      answer.folders.map((f) => [
        out.bold(f.path),
        f.exists ? 'yes' : out.yellow('no'),
        `${f.agentCount}${f.truncated ? '+' : ''}`,
      ]),
    );
  });
}

export async function trackedAdd(ctx: Ctx, folder: string): Promise<void> {
  const answer = await ctx.client.post<Folder>('/tracked-folders', { path: resolve(folder) });
  ctx.out.result(answer, () => ctx.out.line(`tracking ${answer.path} (${answer.agentCount} agent files)`));
}

export async function trackedRemove(ctx: Ctx, folder: string): Promise<number | void> {
  const answer = await ctx.client.request('DELETE', `/tracked-folders?path=${encodeURIComponent(resolve(folder))}`);
  ctx.out.result(answer, () =>
    ctx.out.line(answer.success ? `no longer tracking ${resolve(folder)}` : `${resolve(folder)} was not tracked`),
  );
  return answer.success ? undefined : EXIT.failed;
}

export async function daemonStop(ctx: Ctx, options: { wait: boolean }): Promise<void> {
  const runtime = await ctx.client.get<{ pid: number }>('/runtime');
  await ctx.client.post('/daemon/shutdown');
  if (options.wait) {
    // The daemon's own shutdown is capped at 20 s; it is gone when nothing answers any more.
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await ctx.client.get('/health');
      } catch (error) {
        if (error instanceof CliError && error.exitCode === EXIT.unreachable) break;
      }
      if (Date.now() > deadline)
        throw new CliError(
          `the daemon (pid ${runtime.pid}) accepted the shutdown but still answers after 30 s`,
          EXIT.failed,
        );
      await sleep(100);
    }
  }
  ctx.out.result({ stopped: options.wait, accepted: true, pid: runtime.pid }, () =>
    ctx.out.line(
      options.wait ? `stopped the daemon (pid ${runtime.pid})` : `the daemon (pid ${runtime.pid}) is stopping`,
    ),
  );
}

/** POSIX shell quoting of one argument (the command runs as `sh -c`). */
const quote = (arg: string) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`);

/**
 * A system-scope command dispatch (`POST /agents/{id}/trigger`): it runs where the agent's command
 * targets run, under the agent's `limits.command_timeout_ms` (default 10 s), and ends its turn id with
 * `turn.completed` (the result as text) or `agent.error`, which this waits for on the event stream.
 */
export async function exec(ctx: Ctx, agent: string, words: string[]): Promise<number | void> {
  const command = words.length === 1 ? words[0]! : words.map(quote).join(' ');
  const ref = await ctx.client.get<{ id: string }>(`/agents/${seg(agent)}`);
  let turnId: string | undefined;
  const early: AgtEvent[] = [];
  let done!: (event: AgtEvent) => void;
  const ended = new Promise<AgtEvent>((resolve) => (done = resolve));
  const isEnd = (e: AgtEvent) =>
    (e.event_type === 'turn.completed' || e.event_type === 'agent.error') && e.payload.turn_id === turnId;
  const stream = openEvents(ctx.client, ref.id, (event) => {
    if (turnId === undefined) early.push(event);
    else if (isEnd(event)) done(event);
  });
  try {
    await stream.opened;
    const accepted = await ctx.client.post<{ turnId: string }>(`/agents/${seg(ref.id)}/trigger`, {
      event: { type: 'tool_call', source: 'agt-exec', data: { command } },
      target: { scope: 'system', command },
    });
    turnId = accepted.turnId;
    const seen = early.find(isEnd);
    const end = seen ?? (await ended);
    if (end.event_type === 'agent.error') {
      // The command's own exit code passes through (as `docker exec` does: 124 a time-out); a refusal is 1.
      const exitCode =
        typeof end.payload.exit_code === 'number' && end.payload.exit_code > 0 && end.payload.exit_code < 256
          ? end.payload.exit_code
          : undefined;
      const body = {
        agentId: ref.id,
        turnId,
        command,
        ok: false,
        ...(exitCode !== undefined ? { exitCode } : {}),
        error: { code: end.payload.code, message: end.payload.message },
      };
      if (ctx.out.json) ctx.out.printJson(body);
      else ctx.out.note(`agt: ${end.payload.message} (${end.payload.code})`);
      return exitCode ?? EXIT.failed;
    }
    let result: { exitCode?: number; stdout?: string; target?: string } = {};
    try {
      result = JSON.parse(String(end.payload.text ?? '{}'));
    } catch {
      // Not JSON: the text itself is the output.
      result = { stdout: String(end.payload.text ?? '') };
    }
    ctx.out.result({ agentId: ref.id, turnId, command, ok: true, ...result }, () =>
      process.stdout.write(result.stdout ?? ''),
    );
  } finally {
    stream.close();
  }
}

export async function send(
  ctx: Ctx,
  agent: string,
  recipient: string,
  text: string,
  options: { channel: string; subject?: string; data?: string; wait?: boolean },
): Promise<number | void> {
  const data: Record<string, unknown> = options.data ? jsonObject(options.data, '--data') : {};
  if (options.subject) data.subject = options.subject;
  const body = { text, channel: options.channel, recipient, ...(Object.keys(data).length ? { data } : {}) };
  const queued = await ctx.client.post<{ agentId: string; messageId: number }>(`/agents/${seg(agent)}/outbox`, body);
  let row: { id: number; status: string; error?: string | null; status_code?: number | null } | undefined;
  if (options.wait) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { messages } = await ctx.client.get<{ messages: Array<NonNullable<typeof row>> }>(
        `/agents/${seg(queued.agentId)}/outbox`,
      );
      row = messages.find((m) => m.id === queued.messageId);
      if (!row || row.status === 'delivered' || row.status === 'failed' || Date.now() > deadline) break;
      await sleep(100);
    }
  }
  const status = row?.status ?? 'queued';
  ctx.out.result({ ...queued, status, ...(row ? { message: row } : {}) }, () => {
    if (status === 'failed') ctx.out.note(`agt: message ${queued.messageId} failed: ${row?.error ?? 'refused'}`);
    else
      ctx.out.line(
        `message ${queued.messageId} ${status}${status === 'queued' || status === 'pending' ? ` (agt send --wait waits; GET /agents/${agent}/outbox shows it)` : ''}`,
      );
  });
  return status === 'failed' || (options.wait && status !== 'delivered') ? EXIT.failed : undefined;
}
