/** `agt status` (daemon, identity, extensions, agents) and `agt agents` / `agt ps`. */
import type { Ctx } from '../context.js';
import { ago } from '../output.js';
import { identityHint } from './identity.js';

/**
 * The fields `agt agents` reads of an item of `GET /agents` (checked against the route schema by
 * test/http-api-views.ts).
 */
export interface AgentRow {
  id: string;
  name: string;
  handle?: string;
  filePath: string | null;
  autostart: boolean;
  runtimeState: string;
  displayState: string;
}

export async function agents(ctx: Ctx, options: { all?: boolean } = {}): Promise<void> {
  const { client, out } = ctx;
  const list = await client.get<AgentRow[]>('/agents');
  if (!options.all) return out.result(list, () => printAgents(ctx, list));
  // -a: also the agent files of the tracked folders that are not loaded (state `unloaded`).
  const others = await (await import('./agents.js')).notLoaded(ctx);
  if (others === null) out.note(out.dim('the tracked-folders extension is not running: only loaded agents are listed'));
  const all = [
    ...list.map((a) => ({ ...a, loaded: true })),
    ...(others ?? []).map((a) => ({
      id: a.id,
      name: a.name,
      ...(a.handle ? { handle: a.handle } : {}),
      filePath: a.filePath,
      autostart: a.autostart,
      runtimeState: 'unloaded',
      displayState: '-',
      loaded: false,
      reviewed: a.reviewed,
      passwordProtected: a.passwordProtected,
    })),
  ];
  out.result(all, () => printAgents(ctx, all));
}

function printAgents({ out }: Ctx, list: AgentRow[]): void {
  if (list.length === 0) {
    out.line(out.dim('no agents loaded (agt create, or agt load <file.agt>)'));
    return;
  }
  out.table(
    ['NAME', 'STATE', 'DISPLAY', 'ID', 'FILE'],
    list.map((a) => [
      out.bold(a.name),
      a.runtimeState === 'unloaded' ? out.dim(a.runtimeState) : out.state(a.runtimeState),
      a.displayState,
      a.id,
      a.filePath ?? '-',
    ]),
  );
}

export async function status(ctx: Ctx): Promise<void> {
  const { client, out } = ctx;
  const [runtime, identity, list, backups] = await Promise.all([
    client.get('/runtime'),
    client.get('/identity'),
    client.get<AgentRow[]>('/agents'),
    // The backup schedule (docs/backups.md); an older daemon without the route shows none.
    client.get('/backups').catch(() => null),
  ]);
  const body = { url: client.connection.url, runtime, identity, agents: list, backups };
  out.result(body, () => {
    const id = body.identity as {
      status: string;
      ownerDid: string | null;
      backupConfirmed?: boolean;
      message?: string;
    };
    out.line(
      `${out.bold('daemon')}      ${client.connection.url}  agt ${runtime.version} (pid ${runtime.pid}, up ${ago(runtime.uptimeMs)}, node ${runtime.node})`,
    );
    out.line(`${out.bold('data dir')}    ${runtime.dataDir}`);
    out.line(
      `${out.bold('identity')}    ${id.status === 'ready' ? out.green(id.status) : out.yellow(id.status)}${id.ownerDid ? `  ${id.ownerDid}` : ''}`,
    );
    const hint = identityHint(id);
    if (hint) out.line(`            ${out.dim(hint)}`);
    const extensions = (
      runtime.extensions as Array<{
        name: string;
        enabled: boolean;
        loaded: boolean;
        error: string | null;
        problem?: string | null;
      }>
    ).map((e) =>
      e.error
        ? out.red(`${e.name} (failed: ${e.error})`)
        : !e.enabled
          ? out.dim(`${e.name} (off)`)
          : e.problem
            ? out.yellow(`${e.name} (${e.problem})`)
            : out.green(e.name),
    );
    out.line(`${out.bold('extensions')}  ${extensions.join(', ') || out.dim('none')}`);
    out.line(`${out.bold('events')}      ${runtime.events.bufferedFrames}/${runtime.events.capacity} frames buffered`);
    out.line(`${out.bold('backups')}     ${backupLine(ctx, backups)}`);
    out.line(`${out.bold('agents')}      ${list.length} loaded`);
    if (list.length > 0) {
      out.line();
      printAgents(ctx, list);
    }
  });
}

/** The schedule of `GET /backups` in one line: when, how many kept, the last run. */
function backupLine(
  ctx: Ctx,
  schedule: {
    enabled: boolean;
    every: string | null;
    keep: number | null;
    nextRunAt: string | null;
    problem: string | null;
    lastRun: { startedAt: string; completed: number; failed: number } | null;
  } | null,
): string {
  const { out } = ctx;
  if (!schedule) return out.dim('unknown');
  if (schedule.problem) return out.red(schedule.problem);
  if (!schedule.enabled) return out.dim('not scheduled (settings backups: {every, keep, dir})');
  const last = schedule.lastRun
    ? `; last ${schedule.lastRun.startedAt}: ${schedule.lastRun.completed} copied${schedule.lastRun.failed ? `, ${out.red(`${schedule.lastRun.failed} failed`)}` : ''}`
    : '';
  return `every "${schedule.every}", keep ${schedule.keep}, next ${schedule.nextRunAt ?? '-'}${last}`;
}
