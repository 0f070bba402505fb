/** `agt approvals` (all pending approvals, asks, suspends), `agt approve|deny|answer|resume`. */
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { CliError } from '../errors.js';
import { ago, compact } from '../output.js';
import { askText } from './ask-form.js';

/**
 * What `agt` reads of an item of `GET /tasks` (the route's schema is the kernel's,
 * `kernel/http-api/agents-api.ts`); `test/http-api-views.ts` fails the type check when they disagree.
 */
export interface PendingTask {
  kind: 'approval' | 'budget' | 'ask' | 'suspend';
  id: string;
  agentId: string;
  agentName: string;
  createdAt: number;
  tool?: string;
  args?: object;
  question?: string;
  /** The form of an ask (an MCP elicitation's requested schema). */
  schema?: object;
  reason?: string;
}

export async function approvals(ctx: Ctx): Promise<void> {
  const { client, out } = ctx;
  const { tasks } = await client.get<{ tasks: PendingTask[] }>('/tasks');
  out.result(tasks, () => {
    if (tasks.length === 0) return out.line(out.dim('nothing waits for you'));
    out.table(
      ['KIND', 'AGENT', 'ID', 'AGE', 'WHAT'],
      tasks.map((task) => [
        out.yellow(task.kind),
        task.agentName,
        task.id,
        ago(Date.now() - task.createdAt),
        task.kind === 'approval'
          ? `${task.tool} ${compact(task.args, 80)}`
          : task.kind === 'budget'
            ? String((task.args as Record<string, unknown> | undefined)?.question ?? '')
            : task.kind === 'ask'
              ? askText(task.question ?? '', task.schema as Record<string, unknown> | undefined, task.id)
              : (task.reason ?? ''),
      ]),
    );
    out.line();
    out.line(
      out.dim(
        'answer with: agt approve <id> | agt deny <id> [-r reason] | agt answer <id> <text> | agt resume <agent>',
      ),
    );
  });
}

/** The pending item with this id (task or request id) across agents; `agent` narrows when ids clash. */
async function findPending(ctx: Ctx, id: string, kind: PendingTask['kind'], agent?: string): Promise<PendingTask> {
  // Budget tasks are answered like approvals (docs/costs.md).
  const { tasks } = await ctx.client.get<{ tasks: PendingTask[] }>(
    kind === 'approval' ? '/tasks' : `/tasks?kind=${kind}`,
  );
  const kinds: ReadonlyArray<PendingTask['kind']> = kind === 'approval' ? ['approval', 'budget'] : [kind];
  const found = tasks.filter(
    (task) =>
      kinds.includes(task.kind) && task.id === id && (!agent || task.agentId === agent || task.agentName === agent),
  );
  if (found.length === 0)
    throw new CliError(`no pending ${kind} ${id}${agent ? ` for ${agent}` : ''} (agt approvals lists what waits)`);
  return found[0]!;
}

export async function resolveApproval(
  ctx: Ctx,
  taskId: string,
  action: 'approve' | 'deny',
  options: { agent?: string; reason?: string; args?: string; amount?: string },
): Promise<void> {
  const task = await findPending(ctx, taskId, 'approval', options.agent);
  const body: Record<string, unknown> = { action };
  if (options.amount !== undefined) {
    const amount = Number(options.amount);
    if (!(amount > 0) || !Number.isFinite(amount)) throw new CliError('--amount takes a number above 0', 2);
    body.amount = amount;
  }
  if (options.reason) body.reason = options.reason;
  if (options.args) {
    try {
      body.modifiedArgs = JSON.parse(options.args);
    } catch {
      throw new CliError('--args must be a JSON object', 2);
    }
  }
  const answer = await ctx.client.post(`/agents/${seg(task.agentId)}/tasks/${seg(task.id)}/resolve`, body);
  ctx.out.result(answer, () =>
    ctx.out.line(
      `${action === 'approve' ? ctx.out.green('approved') : ctx.out.red('denied')} ${task.tool} for ${task.agentName}`,
    ),
  );
}

export async function answer(ctx: Ctx, requestId: string, text: string, options: { agent?: string }): Promise<void> {
  const ask = await findPending(ctx, requestId, 'ask', options.agent);
  const reply = await ctx.client.post(`/agents/${seg(ask.agentId)}/asks/${seg(ask.id)}/respond`, { answer: text });
  ctx.out.result(reply, () => ctx.out.line(`answered ${ask.agentName}`));
}

export async function resume(ctx: Ctx, agent: string, options: { stay?: boolean; loop?: string }): Promise<void> {
  const body: Record<string, unknown> = { resume: !options.stay };
  if (options.loop) body.loop = options.loop;
  const reply = await ctx.client.post(`/agents/${seg(agent)}/suspend/respond`, body);
  ctx.out.result(reply, () => ctx.out.line(options.stay ? `${agent} stays suspended` : `${agent} resumed`));
}
