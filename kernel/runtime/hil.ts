/**
 * Human in the loop for one agent (docs/runtime.md#human-in-the-loop-tasks--approvals): approval tasks for restricted
 * tools, `ask` requests and suspend prompts. Every one is a row in the agent file (`agt_tasks`, `agt_prompts`,
 * committed before the event that announces it); a waiting turn holds a promise here, and the owner's route resolves
 * it. A turn that is interrupted, aborted or unloaded cancels what it waits for (the task becomes `cancelled`).
 *
 * Restarts: each task and prompt carries the tool call id it gates. When the daemon stopped while a turn
 * waited for the owner, that turn is resumed when the agent loads again (see recovery.ts): its tool call
 * runs again, and asking the same question for the same call finds the row from before the restart instead
 * of creating a new one (announced again with `hil.requested`, same id). An owner decision given before the
 * resumed turn got back to the call is kept in the row (`delivered = 0`) and handed over when it does. A
 * different question for the same call (a restarted MCP server's new link) supersedes the row instead.
 * At shutdown the store is {@link park}ed: waits end without touching their rows, so they resume later.
 */
import { randomUUID } from 'node:crypto';
import type { AgentFile } from '../agents/agent-file.js';
import {
  MAX_FINISHED_HIL_ROWS,
  TASK_STATUSES,
  type TaskKind,
  type PromptKind,
  type PromptRecord,
  type TaskRecord,
  type TaskResolution,
  type TaskStatus,
} from '../agents/stores/hil-store.js';
import { askNotPending, suspendNotPending, taskNotFound, taskNotPending, turnEnded } from './errors.js';

export { TASK_STATUSES, type TaskStatus };
/** Finished tasks kept per agent (open ones are never dropped). */
export const MAX_TASKS = MAX_FINISHED_HIL_ROWS;
const MAX_RESULT_CHARS = 4_000;

/** A task as the routes show it: the store's row without its runtime bookkeeping (one row type, not two). */
export type Task = Omit<TaskRecord, 'callId' | 'delivered'>;

export interface AskRequest {
  requestId: string;
  question: string;
  /** The JSON Schema of the answer wanted (`ToolContext.ask`'s `schema`), when the asker gave one. */
  schema?: Record<string, unknown>;
  loop: string;
  turnId: string | null;
  createdAt: number;
}

export interface SuspendPrompt {
  requestId: string;
  reason: string;
  loop: string;
  turnId: string | null;
  createdAt: number;
}

export type ApprovalDecision =
  | { approved: true; args: Record<string, unknown> }
  | { approved: false; reason: string | undefined };

/** What the HIL store reports to the agent runtime (events, triggers). */
export interface HilListener {
  taskCreated(task: Task): void;
  taskFinished(task: Task): void;
  requested(kind: 'approval' | 'ask' | 'suspend', item: Task | AskRequest | SuspendPrompt): void;
  resolved(
    kind: 'approval' | 'ask' | 'suspend',
    id: string,
    resolution: string,
    loop: string,
    turnId: string | null,
  ): void;
}

interface Waiter<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

const publicTask = (task: TaskRecord): Task => {
  const { callId: _callId, delivered: _delivered, ...shown } = task;
  return shown;
};

const askOf = (prompt: PromptRecord): AskRequest => ({
  requestId: prompt.id,
  question: prompt.text,
  ...(prompt.schema ? { schema: prompt.schema } : {}),
  loop: prompt.loop,
  turnId: prompt.turnId,
  createdAt: prompt.createdAt,
});
const suspendOf = (prompt: PromptRecord): SuspendPrompt => ({
  requestId: prompt.id,
  reason: prompt.text,
  loop: prompt.loop,
  turnId: prompt.turnId,
  createdAt: prompt.createdAt,
});

/** The same question as a stored ask or suspend prompt: its text and its answer schema. */
const sameQuestion = (prompt: PromptRecord, text: string, schema: Record<string, unknown> | undefined): boolean =>
  prompt.text === text && JSON.stringify(prompt.schema ?? null) === JSON.stringify(schema ?? null);

export interface OwnerWaitInput {
  loop: string;
  turnId: string | null;
  /** The tool call this wait belongs to; lets a resumed turn find its request from before a restart. */
  callId?: string;
  signal: AbortSignal;
}

export class HilStore {
  private readonly taskWaiters = new Map<string, Waiter<ApprovalDecision>>();
  private readonly promptWaiters = new Map<string, Waiter<PromptRecord>>();
  /** Pending asks and suspend prompts per turn, and who waits for them to end (the tool time limit). */
  private readonly humanWaits = new Map<string, { count: number; ended: Promise<void>; end: () => void }>();
  private parked = false;

  constructor(
    private readonly listener: HilListener,
    private readonly file: AgentFile,
    private readonly now: () => number = Date.now,
  ) {}

  private get records() {
    return this.file.hil;
  }

  /**
   * Shutdown: from now on a wait that ends because its turn stops leaves its row open (pending), so the
   * turn resumes when the agent loads again. Nothing is written or announced for it here.
   */
  park(): void {
    this.parked = true;
  }

  // ---- approval tasks -----------------------------------------------------------------------------

  /**
   * Creates a `pending_approval` task and waits for the owner; rejects when `signal` aborts. A task of
   * the same turn and tool call from before a restart is taken up instead (its decision, when the owner
   * already gave it, comes back at once).
   */
  requestApproval(
    input: OwnerWaitInput & {
      tool: string;
      args: Record<string, unknown>;
      kind?: TaskKind;
      /** Asked during a tool call (`ToolContext.sample`): the wait does not count against its time limit. */
      humanWait?: boolean;
    },
  ): {
    task: Task;
    decision: Promise<ApprovalDecision>;
  } {
    const asked = this.approval(input);
    if (input.humanWait) this.trackHumanWait(input.turnId, asked.decision);
    return asked;
  }

  private approval(input: OwnerWaitInput & { tool: string; args: Record<string, unknown>; kind?: TaskKind }): {
    task: Task;
    decision: Promise<ApprovalDecision>;
  } {
    const earlier = input.callId && input.turnId ? this.records.taskForCall(input.turnId, input.callId) : undefined;
    if (earlier && !earlier.delivered && (earlier.status === 'running' || earlier.status === 'denied')) {
      // Decided while no turn waited (after a restart): hand the decision over.
      this.records.updateTask(earlier.id, { delivered: true, updatedAt: this.now() });
      const decision: ApprovalDecision =
        earlier.status === 'running'
          ? { approved: true, args: earlier.resolution?.modifiedArgs ?? earlier.args }
          : { approved: false, reason: earlier.resolution?.reason };
      return { task: publicTask(earlier), decision: Promise.resolve(decision) };
    }
    if (earlier && earlier.status === 'pending_approval' && !this.taskWaiters.has(earlier.id)) {
      const decision = this.waitForTask(earlier, input.signal);
      this.listener.requested('approval', publicTask(earlier));
      return { task: publicTask(earlier), decision };
    }
    const at = this.now();
    const task: TaskRecord = {
      id: randomUUID(),
      kind: input.kind ?? 'approval',
      status: 'pending_approval',
      tool: input.tool,
      args: input.args,
      loop: input.loop,
      turnId: input.turnId,
      callId: input.callId ?? null,
      resolution: null,
      result: null,
      error: null,
      delivered: false,
      createdAt: at,
      updatedAt: at,
    };
    this.records.insertTask(task);
    const decision = this.waitForTask(task, input.signal);
    this.listener.taskCreated(publicTask(task));
    this.listener.requested('approval', publicTask(task));
    return { task: publicTask(task), decision };
  }

  private waitForTask(task: TaskRecord, signal: AbortSignal): Promise<ApprovalDecision> {
    return new Promise<ApprovalDecision>((resolve, reject) => {
      this.taskWaiters.set(task.id, { resolve, reject });
      this.onAbort(signal, () => {
        if (!this.taskWaiters.delete(task.id)) return;
        if (!this.parked) this.cancelTask(task.id, 'the turn ended before the owner decided');
        reject(turnEnded());
      });
    });
  }

  /** Marks an open task cancelled and announces it (`hil.resolved` when it was still pending). */
  private cancelTask(taskId: string, reason: string): void {
    const task = this.safeRead(() => this.records.getTask(taskId));
    if (!task) return;
    if (task.status === 'pending_approval' || (task.status === 'running' && !task.delivered)) {
      this.records.updateTask(taskId, { status: 'cancelled', error: reason, delivered: true, updatedAt: this.now() });
      const updated = this.records.getTask(taskId)!;
      if (task.status === 'pending_approval')
        this.listener.resolved('approval', taskId, 'cancelled', task.loop, task.turnId);
      this.listener.taskFinished(publicTask(updated));
    } else if (!task.delivered) {
      this.records.updateTask(taskId, { delivered: true, updatedAt: this.now() });
    }
  }

  /**
   * The owner's decision. 404 unknown task, 409 a task no longer pending. When no turn waits for it yet
   * (a resumed turn after a restart that has not got back to the call), the decision is kept for it.
   */
  resolveTask(
    taskId: string,
    action: 'approve' | 'deny',
    reason?: string,
    modifiedArgs?: Record<string, unknown>,
  ): Task {
    const task = this.records.getTask(taskId);
    if (!task) throw taskNotFound(taskId);
    if (task.status !== 'pending_approval') throw taskNotPending(taskId, task.status);
    const waiter = this.taskWaiters.get(taskId);
    this.taskWaiters.delete(taskId);
    const resolution: TaskResolution = {
      action,
      ...(reason !== undefined ? { reason } : {}),
      ...(modifiedArgs ? { modifiedArgs } : {}),
    };
    const at = this.now();
    if (action === 'approve') {
      this.records.updateTask(taskId, {
        status: 'running',
        resolution,
        delivered: waiter !== undefined,
        updatedAt: at,
      });
    } else {
      this.records.updateTask(taskId, {
        status: 'denied',
        resolution,
        error: reason ?? null,
        delivered: waiter !== undefined,
        updatedAt: at,
      });
    }
    const updated = publicTask(this.records.getTask(taskId)!);
    if (action === 'deny') this.listener.taskFinished(updated);
    this.listener.resolved('approval', taskId, action === 'approve' ? 'approved' : 'denied', task.loop, task.turnId);
    waiter?.resolve(
      action === 'approve' ? { approved: true, args: modifiedArgs ?? task.args } : { approved: false, reason },
    );
    return updated;
  }

  /** Records the end of an approved task's run. */
  completeTask(taskId: string, ok: boolean, text: string): void {
    const task = this.safeRead(() => this.records.getTask(taskId));
    if (task?.status !== 'running') return;
    const clipped = text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS)}…` : text;
    this.records.updateTask(
      taskId,
      ok
        ? { status: 'completed', result: clipped, updatedAt: this.now() }
        : { status: 'failed', error: clipped, updatedAt: this.now() },
    );
    this.listener.taskFinished(publicTask(this.records.getTask(taskId)!));
  }

  /** The newest `limit` tasks (of one status when given), oldest first. */
  listTasks(status?: string, limit = 100): Task[] {
    return this.records.listTasks(status, limit).map(publicTask);
  }

  getTask(taskId: string): Task {
    const task = this.records.getTask(taskId);
    if (!task) throw taskNotFound(taskId);
    return publicTask(task);
  }

  // ---- asks and suspend prompts -----------------------------------------------------------------

  /**
   * While a turn waits for its owner (an ask or a suspend prompt): a promise of the end of that wait;
   * undefined when it waits for nobody. The tool time limit does not count such waits.
   */
  humanWaitOf(turnId: string | null): Promise<void> | undefined {
    return turnId === null ? undefined : this.humanWaits.get(turnId)?.ended;
  }

  /** Counts a human wait of `turnId` until `settled` settles. */
  private trackHumanWait(turnId: string | null, settled: Promise<unknown>): void {
    if (turnId === null) return;
    let wait = this.humanWaits.get(turnId);
    if (!wait) {
      let end!: () => void;
      const ended = new Promise<void>((resolve) => (end = resolve));
      wait = { count: 0, ended, end };
      this.humanWaits.set(turnId, wait);
    }
    wait.count++;
    const done = () => {
      if (--wait.count > 0) return;
      this.humanWaits.delete(turnId);
      wait.end();
    };
    settled.then(done, done);
  }

  /** The `ask` tool: waits for the owner's answer; rejects when `signal` aborts. Not bounded by time. */
  async ask(
    input: OwnerWaitInput & { question: string; schema?: Record<string, unknown> },
  ): Promise<{ answer: string; fromCaller: boolean }> {
    const answered = await this.waitForOwner('ask', input.question, input, input.schema);
    return { answer: answered.answer ?? '', fromCaller: answered.status === 'answered_by_caller' };
  }

  listAsks(): AskRequest[] {
    return this.records.pendingPrompts('ask').map(askOf);
  }

  /**
   * `fromCaller`: the answer comes from whoever sent the turn's message (an A2A caller), not the owner; the tool result
   * says so.
   */
  respondAsk(requestId: string, answer: string, fromCaller = false): void {
    const prompt = this.records.getPrompt(requestId);
    if (prompt?.kind !== 'ask' || prompt.status !== 'pending') throw askNotPending(requestId);
    this.answer(prompt, fromCaller ? 'answered_by_caller' : 'answered', answer);
  }

  /**
   * A suspend prompt: resolves true (resume) or false (stay suspended); rejects when `signal` aborts. Not bounded by
   * time.
   */
  async suspend(input: OwnerWaitInput & { reason: string }): Promise<boolean> {
    const answered = await this.waitForOwner('suspend', input.reason, input);
    return answered.status === 'resumed';
  }

  /** Pending suspend prompts, oldest first (the operator's task list). */
  listSuspends(): SuspendPrompt[] {
    return this.records.pendingPrompts('suspend').map(suspendOf);
  }

  /** Answers the oldest pending suspend prompt (of `loop` when given); undefined when none is pending. */
  respondSuspend(resume: boolean, loop?: string): SuspendPrompt | undefined {
    const prompt = this.records.pendingPrompts('suspend', loop)[0];
    if (!prompt) return undefined;
    this.answer(prompt, resume ? 'resumed' : 'declined', null);
    return suspendOf(prompt);
  }

  /** Answers one pending suspend prompt by its id (`ctx.agents.tasks`); 404 when it is not pending. */
  answerSuspend(requestId: string, resume: boolean): SuspendPrompt {
    const prompt = this.records.getPrompt(requestId);
    if (prompt?.kind !== 'suspend' || prompt.status !== 'pending') throw suspendNotPending(requestId);
    this.answer(prompt, resume ? 'resumed' : 'declined', null);
    return suspendOf(prompt);
  }

  /** Commits the owner's answer, announces it, then hands it to the waiting turn (or keeps it for a resumed one). */
  private answer(
    prompt: PromptRecord,
    status: 'answered' | 'answered_by_caller' | 'resumed' | 'declined',
    answer: string | null,
  ): void {
    const waiter = this.promptWaiters.get(prompt.id);
    this.promptWaiters.delete(prompt.id);
    this.records.updatePrompt(prompt.id, {
      status,
      ...(answer !== null ? { answer } : {}),
      delivered: waiter !== undefined,
      updatedAt: this.now(),
    });
    this.listener.resolved(prompt.kind, prompt.id, status, prompt.loop, prompt.turnId);
    waiter?.resolve({ ...prompt, status, answer, delivered: true });
  }

  /**
   * Commits a pending ask or suspend prompt (or takes up the one of the same turn and tool call from
   * before a restart), announces it and waits for the owner. An abort of `signal` withdraws it
   * (`hil.resolved` cancelled) and rejects.
   */
  private waitForOwner(
    kind: PromptKind,
    text: string,
    input: OwnerWaitInput,
    schema?: Record<string, unknown>,
  ): Promise<PromptRecord> {
    let earlier =
      input.callId && input.turnId ? this.records.promptForCall(kind, input.turnId, input.callId) : undefined;
    if (earlier && !this.promptWaiters.has(earlier.id) && !sameQuestion(earlier, text, schema)) {
      this.supersede(earlier);
      earlier = undefined;
    }
    if (earlier && earlier.status !== 'pending' && earlier.status !== 'cancelled' && !earlier.delivered) {
      this.records.updatePrompt(earlier.id, { delivered: true, updatedAt: this.now() });
      return Promise.resolve(earlier);
    }
    let record: PromptRecord;
    if (earlier && earlier.status === 'pending' && !this.promptWaiters.has(earlier.id)) {
      record = earlier;
    } else {
      const at = this.now();
      record = {
        id: randomUUID(),
        kind,
        status: 'pending',
        text,
        answer: null,
        loop: input.loop,
        turnId: input.turnId,
        callId: input.callId ?? null,
        // Kept with the ask, so its form is shown again after a restart.
        ...(schema ? { schema } : {}),
        delivered: false,
        createdAt: at,
        updatedAt: at,
      };
      this.records.insertPrompt(record);
    }
    const answer = new Promise<PromptRecord>((resolve, reject) => {
      this.promptWaiters.set(record.id, { resolve, reject });
      this.onAbort(input.signal, () => {
        if (!this.promptWaiters.delete(record.id)) return;
        if (!this.parked) this.cancelPrompt(record.id);
        reject(turnEnded());
      });
    });
    this.trackHumanWait(record.turnId, answer);
    this.listener.requested(kind, kind === 'ask' ? askOf(record) : suspendOf(record));
    return answer;
  }

  /**
   * A resumed call asks something other than the row from before the restart (a restarted MCP server gives
   * a new link): the row is closed as `superseded` (announced when it was pending) and an answer it got is
   * not handed over, since it answered the old question.
   */
  private supersede(prompt: PromptRecord): void {
    if (prompt.status === 'pending') {
      this.records.updatePrompt(prompt.id, { status: 'superseded', delivered: true, updatedAt: this.now() });
      this.listener.resolved(prompt.kind, prompt.id, 'superseded', prompt.loop, prompt.turnId);
    } else if (!prompt.delivered) {
      this.records.updatePrompt(prompt.id, { delivered: true, updatedAt: this.now() });
    }
  }

  private cancelPrompt(requestId: string): void {
    const prompt = this.safeRead(() => this.records.getPrompt(requestId));
    if (!prompt) return;
    if (prompt.status === 'pending') {
      this.records.updatePrompt(requestId, { status: 'cancelled', delivered: true, updatedAt: this.now() });
      this.listener.resolved(prompt.kind, requestId, 'cancelled', prompt.loop, prompt.turnId);
    } else if (!prompt.delivered) {
      this.records.updatePrompt(requestId, { delivered: true, updatedAt: this.now() });
    }
  }

  // ---- turn ends and restarts -----------------------------------------------------------------------

  /**
   * Closes what the given turns left open (their turn ended: nothing will pick it up any more): pending
   * tasks and prompts become `cancelled` (announced), undelivered decisions are marked delivered.
   * A no-op for turns that left nothing open, which is every turn that ran normally.
   */
  closeTurns(turnIds: readonly string[], reason: string): void {
    if (this.parked || !this.file.isOpen || turnIds.length === 0) return;
    // One query each for all of them: an end may name a burst's 1,000 absorbed chats.
    const ids = turnIds.length === 1 ? turnIds[0]! : turnIds;
    for (const task of this.records.openTasks(ids)) {
      const waiter = this.taskWaiters.get(task.id);
      this.taskWaiters.delete(task.id);
      this.cancelTask(task.id, reason);
      waiter?.reject(turnEnded());
    }
    for (const prompt of this.records.openPrompts(ids)) {
      const waiter = this.promptWaiters.get(prompt.id);
      this.promptWaiters.delete(prompt.id);
      this.cancelPrompt(prompt.id);
      waiter?.reject(turnEnded());
    }
  }

  /** Turns that wait for the owner in the file (open tasks and prompts), with their loop and tool calls. */
  openTurns(): Map<string, { loop: string; callIds: Set<string> }> {
    const turns = new Map<string, { loop: string; callIds: Set<string> }>();
    const add = (item: { turnId: string | null; loop: string; callId: string | null }) => {
      if (!item.turnId) return;
      let turn = turns.get(item.turnId);
      if (!turn) turns.set(item.turnId, (turn = { loop: item.loop, callIds: new Set() }));
      if (!item.callId) return;
      turn.callIds.add(item.callId);
      // A tool's own ask or sampling approval (`ToolContext.ask`, `.sample`) is keyed `<call id>:ask|sample:<n>`:
      // the turn waits on that call.
      const own = /:(ask|sample):\d+$/.exec(item.callId);
      if (own) turn.callIds.add(item.callId.slice(0, own.index));
    };
    for (const task of this.records.openTasks()) add(task);
    for (const prompt of this.records.openPrompts()) add(prompt);
    return turns;
  }

  /**
   * Restart recovery: approved tasks whose tool had started when the daemon stopped become `failed`
   * (whether the tool finished is unknown; it is not run again). Returns their tool call ids by turn.
   */
  failInterrupted(reason: string): TaskRecord[] {
    const tasks = this.records.interruptedTasks();
    for (const task of tasks) {
      this.records.updateTask(task.id, { status: 'failed', error: reason, updatedAt: this.now() });
      this.listener.taskFinished(publicTask(this.records.getTask(task.id)!));
    }
    return tasks;
  }

  private safeRead<T>(read: () => T): T | undefined {
    if (!this.file.isOpen) return undefined;
    return read();
  }

  private onAbort(signal: AbortSignal, fn: () => void): void {
    if (signal.aborted) queueMicrotask(fn);
    else signal.addEventListener('abort', fn, { once: true });
  }
}
