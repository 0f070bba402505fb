/**
 * Human in the loop for one agent (decision D6): approval tasks for restricted tools, `ask` requests
 * and suspend prompts. A waiting turn holds a promise here; the owner's route resolves it. A turn that
 * is interrupted, aborted or unloaded cancels what it waits for (the task becomes `cancelled`).
 *
 * Tasks live in memory for the life of the loaded agent (history bounded to {@link MAX_TASKS});
 * pending ones cannot outlive the turn that waits for them anyway.
 */
import { randomUUID } from 'node:crypto';
import { AgtError } from '../../contracts/errors.js';

export const TASK_STATUSES = ['pending', 'pending_approval', 'running', 'completed', 'failed', 'denied', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const MAX_TASKS = 500;
const MAX_RESULT_CHARS = 4_000;

export interface Task {
  id: string;
  kind: 'approval';
  status: TaskStatus;
  tool: string;
  args: Record<string, unknown>;
  loop: string;
  turnId: string | null;
  createdAt: number;
  updatedAt: number;
  resolution: { action: 'approve' | 'deny'; reason?: string; modifiedArgs?: Record<string, unknown> } | null;
  result: string | null;
  error: string | null;
}

export interface AskRequest {
  requestId: string;
  question: string;
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

export type ApprovalDecision = { approved: true; args: Record<string, unknown> } | { approved: false; reason: string | undefined };

/** What the HIL store reports to the agent runtime (events, triggers). */
export interface HilListener {
  taskCreated(task: Task): void;
  taskFinished(task: Task): void;
  requested(kind: 'approval' | 'ask' | 'suspend', item: Task | AskRequest | SuspendPrompt): void;
  resolved(kind: 'approval' | 'ask' | 'suspend', id: string, resolution: string, loop: string, turnId: string | null): void;
}

interface Waiter<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

const cancelled = () => new AgtError('conflict', 'cancelled: the turn waiting for it ended');

export class HilStore {
  private readonly tasks = new Map<string, Task>();
  private readonly taskWaiters = new Map<string, Waiter<ApprovalDecision>>();
  private readonly asks = new Map<string, AskRequest & Waiter<string>>();
  private readonly suspends = new Map<string, SuspendPrompt & Waiter<boolean>>();
  /** Pending asks and suspend prompts per turn, and who waits for them to end (the tool time limit). */
  private readonly humanWaits = new Map<string, { count: number; ended: Promise<void>; end: () => void }>();

  constructor(
    private readonly listener: HilListener,
    private readonly now: () => number = Date.now,
  ) {}

  /** Creates a `pending_approval` task and waits for the owner; rejects when `signal` aborts. */
  requestApproval(input: { tool: string; args: Record<string, unknown>; loop: string; turnId: string | null; signal: AbortSignal }): { task: Task; decision: Promise<ApprovalDecision> } {
    const at = this.now();
    const task: Task = {
      id: randomUUID(),
      kind: 'approval',
      status: 'pending_approval',
      tool: input.tool,
      args: input.args,
      loop: input.loop,
      turnId: input.turnId,
      createdAt: at,
      updatedAt: at,
      resolution: null,
      result: null,
      error: null,
    };
    this.tasks.set(task.id, task);
    this.trim();
    const decision = new Promise<ApprovalDecision>((resolve, reject) => {
      this.taskWaiters.set(task.id, { resolve, reject });
      this.onAbort(input.signal, () => {
        if (task.status !== 'pending_approval') return;
        this.taskWaiters.delete(task.id);
        this.finish(task, 'cancelled', { error: 'the turn ended before the owner decided' });
        this.listener.resolved('approval', task.id, 'cancelled', task.loop, task.turnId);
        reject(cancelled());
      });
    });
    this.listener.taskCreated(task);
    this.listener.requested('approval', task);
    return { task, decision };
  }

  /** The owner's decision. 404 unknown task, 409 a task no longer pending. */
  resolveTask(taskId: string, action: 'approve' | 'deny', reason?: string, modifiedArgs?: Record<string, unknown>): Task {
    const task = this.tasks.get(taskId);
    if (!task) throw new AgtError('not_found', `no task ${taskId}`);
    const waiter = this.taskWaiters.get(taskId);
    if (task.status !== 'pending_approval' || !waiter) throw new AgtError('conflict', `task ${taskId} is ${task.status}, not pending approval`);
    this.taskWaiters.delete(taskId);
    task.resolution = { action, ...(reason !== undefined ? { reason } : {}), ...(modifiedArgs ? { modifiedArgs } : {}) };
    if (action === 'approve') {
      task.status = 'running';
      task.updatedAt = this.now();
      waiter.resolve({ approved: true, args: modifiedArgs ?? task.args });
    } else {
      this.finish(task, 'denied', { error: reason ?? null });
      waiter.resolve({ approved: false, reason });
    }
    this.listener.resolved('approval', taskId, action === 'approve' ? 'approved' : 'denied', task.loop, task.turnId);
    return task;
  }

  /** Records the end of an approved task's run. */
  completeTask(taskId: string, ok: boolean, text: string): void {
    const task = this.tasks.get(taskId);
    if (!task || task.status !== 'running') return;
    const clipped = text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS)}…` : text;
    this.finish(task, ok ? 'completed' : 'failed', ok ? { result: clipped } : { error: clipped });
  }

  private finish(task: Task, status: TaskStatus, fields: { result?: string; error?: string | null }): void {
    task.status = status;
    task.updatedAt = this.now();
    if (fields.result !== undefined) task.result = fields.result;
    if (fields.error !== undefined) task.error = fields.error;
    this.listener.taskFinished(task);
  }

  listTasks(status?: string, limit = 100): Task[] {
    const all = [...this.tasks.values()].filter((t) => status === undefined || t.status === status);
    return all.slice(-limit);
  }

  getTask(taskId: string): Task {
    const task = this.tasks.get(taskId);
    if (!task) throw new AgtError('not_found', `no task ${taskId}`);
    return task;
  }

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
  ask(input: { question: string; loop: string; turnId: string | null; signal: AbortSignal }): Promise<string> {
    const request: AskRequest = { requestId: randomUUID(), question: input.question, loop: input.loop, turnId: input.turnId, createdAt: this.now() };
    return this.waitForOwner('ask', this.asks, request, input.signal);
  }

  listAsks(): AskRequest[] {
    return [...this.asks.values()].map(({ requestId, question, loop, turnId, createdAt }) => ({ requestId, question, loop, turnId, createdAt }));
  }

  respondAsk(requestId: string, answer: string): void {
    const pending = this.asks.get(requestId);
    if (!pending) throw new AgtError('not_found', `no pending ask ${requestId}`);
    this.asks.delete(requestId);
    this.listener.resolved('ask', requestId, 'answered', pending.loop, pending.turnId);
    pending.resolve(answer);
  }

  /** A suspend prompt: resolves true (resume) or false (stay suspended); rejects when `signal` aborts. Not bounded by time. */
  suspend(input: { reason: string; loop: string; turnId: string | null; signal: AbortSignal }): Promise<boolean> {
    const prompt: SuspendPrompt = { requestId: randomUUID(), reason: input.reason, loop: input.loop, turnId: input.turnId, createdAt: this.now() };
    return this.waitForOwner('suspend', this.suspends, prompt, input.signal);
  }

  /**
   * Registers a pending ask or suspend prompt, announces it and waits for the owner. An abort of
   * `signal` withdraws it (`hil.resolved` cancelled) and rejects.
   */
  private waitForOwner<T, R extends AskRequest | SuspendPrompt>(
    kind: 'ask' | 'suspend',
    pending: Map<string, R & Waiter<T>>,
    record: R,
    signal: AbortSignal,
  ): Promise<T> {
    const answer = new Promise<T>((resolve, reject) => {
      pending.set(record.requestId, { ...record, resolve, reject });
      this.onAbort(signal, () => {
        if (!pending.delete(record.requestId)) return;
        this.listener.resolved(kind, record.requestId, 'cancelled', record.loop, record.turnId);
        reject(cancelled());
      });
    });
    this.trackHumanWait(record.turnId, answer);
    this.listener.requested(kind, record);
    return answer;
  }

  /** Answers the oldest pending suspend prompt (of `loop` when given); false when none is pending. */
  respondSuspend(resume: boolean, loop?: string): SuspendPrompt | undefined {
    const pending = [...this.suspends.values()].find((p) => loop === undefined || p.loop === loop);
    if (!pending) return undefined;
    this.suspends.delete(pending.requestId);
    this.listener.resolved('suspend', pending.requestId, resume ? 'resumed' : 'declined', pending.loop, pending.turnId);
    pending.resolve(resume);
    return pending;
  }

  private onAbort(signal: AbortSignal, fn: () => void): void {
    if (signal.aborted) queueMicrotask(fn);
    else signal.addEventListener('abort', fn, { once: true });
  }

  /** Drops the oldest finished tasks beyond the bound (pending ones are never dropped). */
  private trim(): void {
    if (this.tasks.size <= MAX_TASKS) return;
    for (const [id, task] of this.tasks) {
      if (this.tasks.size <= MAX_TASKS) break;
      if (task.status !== 'pending_approval' && task.status !== 'running') this.tasks.delete(id);
    }
  }
}
