/**
 * `agt chat <agent>`: an interactive session, or one message with `-m`. The reply streams from the event stream's
 * `llm.delta` events as it is generated (on a terminal), tool calls and their results are shown compactly on stderr,
 * and when the agent waits for the owner (an approval, an ask, a suspend prompt) the question is asked inline. The
 * stream is opened (and its hello awaited) before the chat is sent, so no event of the turn is missed; events are shown
 * one at a time, in order, and those that arrive before the chat's 202 wait until the turn id is known. One-shot exit
 * code: 0 when the turn completed, 1 on `agent.error` or a discarded chat.
 */
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { compact } from '../output.js';
import { openEvents, type AgtEvent } from '../stream.js';
import { askText, fillForm } from './ask-form.js';

export interface ChatOptions {
  message?: string;
  loop?: string;
}

export interface TurnEnd {
  agentId: string;
  turnId: string;
  status: 'completed' | 'error' | 'discarded';
  text: string | null;
  stopReason: string | null;
  error: { code: string; message: string } | null;
}

type Prompts = typeof import('@inquirer/prompts');
let prompts: Promise<Prompts> | undefined;
/** The prompt library, loaded on first use only (a one-shot chat in a script never needs it). */
const loadPrompts = () => (prompts ??= import('@inquirer/prompts'));

const isCancel = (error: unknown) =>
  (error as Error)?.name === 'ExitPromptError' || (error as Error)?.name === 'AbortPromptError';

class ChatSession {
  /** Resolves once the chat's turn id is known (events that come before the 202 wait for it, in order). */
  private known: Promise<void> = Promise.resolve();
  private setKnown: () => void = () => {};
  private turns = new Set<string>();
  private turnId: string | undefined;
  private finish: ((end: TurnEnd) => void) | undefined;
  private midLine = false;
  private streamed = false;
  /** Owner prompts run one at a time, in the order the agent asked. */
  private prompting: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: Ctx,
    private readonly agentId: string,
    private readonly agentName: string,
    private readonly loop: string | undefined,
    private readonly interactive: boolean,
    private readonly streamText: boolean,
  ) {}

  /** Sends one chat and resolves when its turn ends. */
  async send(text: string): Promise<TurnEnd> {
    this.turns.clear();
    this.turnId = undefined;
    this.streamed = false;
    const ended = new Promise<TurnEnd>((resolve) => (this.finish = resolve));
    this.known = new Promise((resolve) => (this.setKnown = resolve));
    const query = this.loop ? `?loop=${seg(this.loop)}` : '';
    try {
      const accepted = await this.ctx.client.post<{ turnId: string }>(`/agents/${seg(this.agentId)}/chat${query}`, {
        text,
      });
      this.turnId = accepted.turnId;
      this.turns.add(accepted.turnId);
    } catch (error) {
      this.finish = undefined;
      throw error;
    } finally {
      this.setKnown();
    }
    const end = await ended;
    await this.prompting;
    return end;
  }

  /** Events are shown one after the other: a tool result looked up before what follows it. */
  private showing: Promise<void> = Promise.resolve();

  onEvent = (event: AgtEvent): void => {
    this.showing = this.showing.then(() => this.show(event)).catch(() => {});
  };

  /** The tool's result text (its loop row), cut to one line; undefined when it cannot be read. */
  private async toolResult(event: AgtEvent): Promise<string | undefined> {
    try {
      const loop = event.loop ?? 'main';
      const history = await this.ctx.client.get<{
        llmMessages: Array<{ toolCallId?: string; content: string }>;
      } | null>(`/agents/${seg(this.agentId)}/chat?limit=20&loop=${seg(loop)}`);
      const row = history?.llmMessages.filter((message) => message.toolCallId === event.payload.call_id).at(-1);
      return row ? compact(row.content.replace(/\s+/g, ' ').trim(), 160).replace(/^"|"$/g, '') : undefined;
    } catch {
      return undefined;
    }
  }

  private async show(event: AgtEvent): Promise<void> {
    if (!this.finish) return;
    if (this.turnId === undefined) await this.known;
    if (this.turnId === undefined) return;
    const p = event.payload ?? {};
    if (
      event.event_type === 'chat.delivered' &&
      Array.isArray(p.turn_ids) &&
      p.turn_ids.some((id: string) => this.turns.has(id)) &&
      event.turn_id
    ) {
      this.turns.add(event.turn_id);
      return;
    }
    const ours = (event.turn_id !== undefined && this.turns.has(event.turn_id)) || this.endsOurs(event);
    if (!ours) return;
    const { out } = this.ctx;
    switch (event.event_type) {
      case 'llm.delta':
        if (this.streamText) {
          process.stdout.write(p.text);
          this.midLine = !String(p.text).endsWith('\n');
          this.streamed = true;
        }
        return;
      case 'tool.started':
        this.note(out.dim(`  → ${p.tool} ${compact(p.args)}`));
        return;
      case 'tool.completed': {
        const result = out.json ? undefined : await this.toolResult(event);
        const shown = result ? `: ${result}` : '';
        this.note(
          p.ok
            ? out.dim(`  ✓ ${p.tool} (${p.duration_ms} ms)${shown}`)
            : out.red(`  ✗ ${p.tool} failed (${p.duration_ms} ms)${shown}`),
        );
        return;
      }
      case 'agent.said':
        this.note(`${out.cyan(this.agentName)}: ${p.text}`);
        return;
      case 'hil.requested':
        this.prompting = this.prompting
          .then(() => this.askOwner(p))
          .catch((error) => this.note(out.red(`  ${(error as Error).message}`)));
        return;
      case 'turn.completed':
        return this.end({ status: 'completed', text: p.text ?? null, stopReason: p.stop_reason ?? null, error: null });
      case 'agent.error':
        return this.end({ status: 'error', text: null, stopReason: null, error: { code: p.code, message: p.message } });
      case 'chat.discarded':
        return this.end({
          status: 'discarded',
          text: null,
          stopReason: null,
          error: { code: 'discarded', message: `the chat was discarded (${p.reason})` },
        });
      default:
    }
  }

  private endsOurs(event: AgtEvent): boolean {
    const p = event.payload ?? {};
    const named = (list: unknown) => Array.isArray(list) && list.some((id) => this.turns.has(id));
    if (event.event_type === 'turn.completed' || event.event_type === 'agent.error')
      return this.turns.has(p.turn_id) || named(p.absorbed_turn_ids);
    if (event.event_type === 'chat.discarded') return named(p.turn_ids);
    return false;
  }

  private end(end: Omit<TurnEnd, 'agentId' | 'turnId'>): void {
    const finish = this.finish;
    this.finish = undefined;
    if (this.midLine) process.stdout.write('\n');
    this.midLine = false;
    finish?.({ agentId: this.agentId, turnId: this.turnId!, ...end });
  }

  /** Whether the reply already reached the screen as deltas. */
  get replyStreamed(): boolean {
    return this.streamed;
  }

  private note(text: string): void {
    if (this.ctx.out.json) return;
    if (this.midLine) {
      process.stdout.write('\n');
      this.midLine = false;
    }
    process.stderr.write(`${text}\n`);
  }

  /** Asks the owner inline (on a terminal), or says how to answer from elsewhere. */
  private async askOwner(p: Record<string, any>): Promise<void> {
    const { client, out } = this.ctx;
    const base = `/agents/${seg(this.agentId)}`;
    if (!this.interactive) {
      if (p.kind === 'approval')
        this.note(
          out.yellow(
            `  ? ${this.agentName} waits for approval of ${p.tool} ${compact(p.args)}: agt approve ${p.taskId} (or agt deny ${p.taskId})`,
          ),
        );
      else if (p.kind === 'ask')
        this.note(
          out.yellow(
            p.schema
              ? `  ? ${this.agentName} asks: ${askText(p.question, p.schema, p.requestId)}`
              : `  ? ${this.agentName} asks: ${p.question}  (agt answer ${p.requestId} "...")`,
          ),
        );
      else this.note(out.yellow(`  ? ${this.agentName} asks to suspend: ${p.reason}  (agt resume ${this.agentName})`));
      return;
    }
    const { select, input, confirm } = await loadPrompts();
    if (this.midLine) {
      process.stdout.write('\n');
      this.midLine = false;
    }
    try {
      if (p.kind === 'approval') {
        const action = await select({
          message: `${this.agentName} wants to run ${out.bold(p.tool)} ${compact(p.args, 200)}`,
          choices: [
            { name: 'Approve', value: 'approve' },
            { name: 'Deny', value: 'deny' },
            { name: 'Decide later (agt approvals)', value: 'later' },
          ],
        });
        if (action === 'later') return;
        const reason = action === 'deny' ? await input({ message: 'Reason (optional)' }) : '';
        await client.post(`${base}/tasks/${seg(p.taskId)}/resolve`, { action, ...(reason ? { reason } : {}) });
      } else if (p.kind === 'ask') {
        // A form (an MCP elicitation) is asked field by field; any other question takes a line of text.
        const answer = p.schema
          ? await fillForm(this.ctx, this.agentName, p.question, p.schema, await loadPrompts())
          : await input({ message: `${this.agentName} asks: ${p.question}` });
        if (answer === undefined) return;
        await client.post(`${base}/asks/${seg(p.requestId)}/respond`, { answer });
      } else {
        const resume = await confirm({
          message: `${this.agentName} asks to suspend (${p.reason}). Resume it?`,
          default: true,
        });
        await client.post(`${base}/suspend/respond`, { resume });
      }
    } catch (error) {
      if (isCancel(error)) return;
      // Answered elsewhere meanwhile (409/404): the turn goes on with that answer.
      if (error instanceof CliError && (error.body?.code === 'conflict' || error.body?.code === 'not_found')) return;
      throw error;
    }
  }
}

function printEnd(ctx: Ctx, end: TurnEnd, streamed: boolean): void {
  const { out } = ctx;
  if (out.json) return out.printJson(end);
  if (end.status === 'completed') {
    if (!streamed && end.text) out.line(end.text);
    if (end.stopReason && !['end', 'end_turn', 'stop', 'stop_sequence'].includes(end.stopReason))
      out.note(out.dim(`(turn ended: ${end.stopReason})`));
    return;
  }
  out.note(
    out.red(`error: ${end.error?.message ?? 'the turn failed'}${end.error?.code ? ` (${end.error.code})` : ''}`),
  );
}

export async function chat(ctx: Ctx, agent: string, options: ChatOptions): Promise<number> {
  const { client, out } = ctx;
  const ref = await client.get<{ id: string; config: { name: string } }>(`/agents/${seg(agent)}`);
  const interactive = process.stdin.isTTY === true && !out.json;
  const session = new ChatSession(
    ctx,
    ref.id,
    ref.config.name,
    options.loop,
    interactive,
    process.stdout.isTTY === true && !out.json,
  );
  const stream = openEvents(client, ref.id, session.onEvent);
  try {
    await stream.opened;
    if (options.message !== undefined) {
      const end = await withInterrupt(ctx, ref.id, options.loop, () => session.send(options.message!));
      printEnd(ctx, end, session.replyStreamed);
      return end.status === 'completed' ? EXIT.ok : EXIT.failed;
    }
    if (!interactive)
      throw new CliError('an interactive chat needs a terminal; pass the message with -m "text"', EXIT.usage);
    const { input } = await loadPrompts();
    out.note(out.dim(`chatting with ${ref.config.name} (${ref.id}); /exit or Ctrl-C to leave`));
    for (;;) {
      let text: string;
      try {
        text = (await input({ message: out.bold('you') })).trim();
      } catch (error) {
        if (isCancel(error)) return EXIT.ok;
        throw error;
      }
      if (text === '') continue;
      if (text === '/exit' || text === '/quit') return EXIT.ok;
      if (!out.colors) process.stdout.write(`${ref.config.name}: `);
      else process.stdout.write(`${out.cyan(ref.config.name)}: `);
      let end: TurnEnd;
      try {
        end = await withInterrupt(ctx, ref.id, options.loop, () => session.send(text));
      } catch (error) {
        // A refused chat (a disabled loop, the agent unloaded meanwhile) ends this message, not the session.
        if (!(error instanceof CliError) || error.exitCode !== EXIT.failed) throw error;
        process.stdout.write('\n');
        out.note(out.red(`error: ${error.message}`));
        continue;
      }
      printEnd(ctx, end, session.replyStreamed);
    }
  } finally {
    stream.close();
  }
}

/** While a turn runs, Ctrl-C interrupts it (the daemon ends it as `interrupted`) instead of leaving. */
async function withInterrupt<T>(
  ctx: Ctx,
  agentId: string,
  loop: string | undefined,
  work: () => Promise<T>,
): Promise<T> {
  const onSigint = () => {
    ctx.out.note(ctx.out.dim('  (interrupting the turn; Ctrl-C again leaves)'));
    process.once('SIGINT', () => process.exit(130));
    void ctx.client.post(`/agents/${seg(agentId)}/interrupt`, loop ? { loop } : {}).catch(() => {});
  };
  process.once('SIGINT', onSigint);
  try {
    return await work();
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}
