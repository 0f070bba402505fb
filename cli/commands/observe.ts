/**
 * `agt logs <agent> [-f]` (the agent's `agt_logs` rows; following, also its turns and tool calls from the
 * event stream) and `agt events [--agent]` (the live stream).
 */
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { compact, type Output } from '../output.js';
import { openEvents, type AgtEvent } from '../stream.js';

export interface LogRow {
  id: number;
  level: string;
  origin: string | null;
  event: string | null;
  message: string;
  data: string | null;
  created_at: number;
}

/** `GET /agents/{id}/logs`. */
export interface AgentLogs {
  agentId: string;
  logs: LogRow[];
}

const time = (ms: number) => new Date(ms).toTimeString().slice(0, 8);

function printLog(out: Output, row: LogRow): void {
  if (out.json) return out.line(JSON.stringify(row));
  const level =
    row.level === 'error' ? out.red(row.level) : row.level === 'warn' ? out.yellow(row.level) : out.dim(row.level);
  out.line(
    `${out.dim(time(row.created_at))} ${level.padEnd(out.colors ? 14 : 5)} ${out.dim(row.origin ?? '-')} ${row.event ? `${out.cyan(row.event)} ` : ''}${row.message}`,
  );
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: a duration back from now (`30s`, `10m`, `2h`, `1d`, as docker takes them) or a date/time (ISO 8601). */
export function sinceTime(value: string, now = Date.now()): number {
  const duration = /^(\d+(?:\.\d+)?)(s|m|h|d)$/.exec(value.trim());
  if (duration) return now - Number(duration[1]) * UNITS[duration[2]!]!;
  const date = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isFinite(date)) return date;
  throw new CliError(
    `--since takes a duration (30s, 10m, 2h, 1d) or a date and time (2026-11-29T08:00:00Z), not ${JSON.stringify(value)}`,
    EXIT.usage,
  );
}

/** What `logs -f` shows of the event stream besides log rows: the agent's turns, tool calls, waits and errors. */
const FOLLOWED = new Set([
  'turn.started',
  'turn.completed',
  'tool.started',
  'tool.completed',
  'hil.requested',
  'hil.resolved',
  'agent.error',
  'agent.state.changed',
]);

/**
 * The agent's log rows; with `-f`, then what the agent does as it happens: its new log rows and its
 * turns, tool calls, approvals and errors, from the event stream (opened before the rows are read, so
 * nothing falls between the two).
 */
export async function logs(
  ctx: Ctx,
  agent: string,
  options: { follow?: boolean; lines?: string; tail?: string; since?: string },
): Promise<void> {
  const { client, out } = ctx;
  const count = options.tail ?? options.lines;
  const tail = count === undefined ? undefined : Number(count);
  if (tail !== undefined && !(Number.isInteger(tail) && tail >= 1 && tail <= 500))
    throw new CliError('--tail (-n) takes a number of rows from 1 to 500', EXIT.usage);
  const since = options.since === undefined ? undefined : sinceTime(options.since);
  // With --since the newest 500 rows are read and those older dropped; then --tail keeps the last N.
  const limit = since !== undefined ? 500 : (tail ?? 50);
  const path = (id: string) => `/agents/${seg(id)}/logs?limit=${limit}`;
  const pick = (rows: LogRow[]) => {
    const recent = since === undefined ? rows : rows.filter((row) => row.created_at >= since);
    return tail === undefined ? recent : recent.slice(-tail);
  };
  if (!options.follow) {
    const first = pick((await client.get<AgentLogs>(path(agent))).logs);
    if (out.json) return out.printJson(first);
    for (const row of first) printLog(out, row);
    return;
  }
  const ref = await client.get<{ id: string }>(`/agents/${seg(agent)}`);
  const early: AgtEvent[] = [];
  let live = false;
  const show = (event: AgtEvent) => {
    if (event.event_type === 'log.written') {
      const p = event.payload ?? {};
      return printLog(out, {
        id: 0,
        level: p.level,
        origin: p.origin ?? null,
        event: p.event ?? null,
        message: p.message,
        data: null,
        created_at: event.timestamp,
      });
    }
    if (!FOLLOWED.has(event.event_type)) return;
    if (out.json) return out.line(JSON.stringify(event));
    out.line(
      `${out.dim(time(event.timestamp))} ${out.cyan(event.event_type)}${event.loop && event.loop !== 'main' ? out.dim(` (${event.loop})`) : ''} ${describe(out, event)}`,
    );
  };
  const stream = openEvents(client, ref.id, (event) => (live ? show(event) : early.push(event)));
  await stream.opened;
  const first = { logs: pick((await client.get<AgentLogs>(path(ref.id))).logs) };
  for (const row of first.logs) printLog(out, row);
  // A row written between the stream's hello and the read is both a row and an event: shown once.
  const shown = new Set(first.logs.map((row) => `${row.level}|${row.message}`));
  for (const event of early) {
    if (event.event_type === 'log.written' && shown.has(`${event.payload?.level}|${event.payload?.message}`)) continue;
    show(event);
  }
  live = true;
  if (!out.json) out.note(out.dim(`following ${agent}: log rows, turns and tool calls; Ctrl-C to stop`));
  // Runs until interrupted.
  await new Promise(() => {});
}

/** One line per event: what happened, compactly (deltas are shown as their text). */
export function describe(out: Output, event: AgtEvent): string {
  const p = event.payload ?? {};
  switch (event.event_type) {
    case 'agent.state.changed':
      return `${out.state(p.state)}${p.loop ? ` (loop ${p.loop})` : ''}`;
    case 'turn.started':
      return `${p.turn_id} (${p.trigger})`;
    case 'turn.completed':
      return `${p.turn_id} ${p.stop_reason}, ${p.llm_calls} model calls, ${p.tool_calls} tool calls${p.text ? `: ${compact(p.text, 100)}` : ''}`;
    case 'agent.error':
      return out.red(`${p.code}: ${p.message}`);
    case 'llm.delta':
      return compact(p.text, 100);
    case 'llm.completed':
      return `${p.provider}/${p.model} in ${p.usage?.input ?? 0} out ${p.usage?.output ?? 0} tokens, ${p.duration_ms} ms`;
    case 'tool.started':
      return `${p.tool} ${compact(p.args, 100)}`;
    case 'tool.completed':
      return `${p.tool} ${p.ok ? out.green('ok') : out.red('failed')} ${p.duration_ms} ms`;
    case 'hil.requested':
      return out.yellow(
        p.kind === 'approval'
          ? `approval ${p.taskId}: ${p.tool} ${compact(p.args, 80)}`
          : p.kind === 'ask'
            ? `ask ${p.requestId}: ${p.question}`
            : `suspend ${p.requestId}: ${p.reason}`,
      );
    case 'log.written':
      return `${p.level} ${p.message}`;
    default:
      return compact(p, 120);
  }
}

export async function events(ctx: Ctx, options: { agent?: string; deltas?: boolean }): Promise<void> {
  const { client, out } = ctx;
  let agentId: string | undefined;
  let names = new Map<string, string>();
  if (options.agent) {
    const ref = await client.get<{ id: string; config: { name: string } }>(`/agents/${seg(options.agent)}`);
    agentId = ref.id;
    names.set(ref.id, ref.config.name);
  } else {
    names = new Map((await client.get<Array<{ id: string; name: string }>>('/agents')).map((a) => [a.id, a.name]));
  }
  const stream = openEvents(client, agentId, (event) => {
    if (out.json) return out.line(JSON.stringify(event));
    if (event.event_type === 'llm.delta' && !options.deltas) return;
    if (event.event_type === 'agent.loaded' && event.agent_id) names.set(event.agent_id, event.payload?.name);
    const who = event.agent_id ? (names.get(event.agent_id) ?? event.agent_id) : 'daemon';
    out.line(
      `${out.dim(time(event.timestamp))} ${out.bold(who)}${event.loop && event.loop !== 'main' ? out.dim(`/${event.loop}`) : ''} ${out.cyan(event.event_type)} ${describe(out, event)}`,
    );
  });
  await stream.opened;
  if (!out.json)
    out.note(out.dim(`watching ${options.agent ?? 'all agents'} at ${client.connection.url}; Ctrl-C to stop`));
  // Runs until interrupted.
  await new Promise(() => {});
}
