/**
 * A2A tasks of agt turns (task id = turnId: a turn already has states and an end on the bus). A task's state follows
 * its turn on the event bus: queued `submitted`, `turn.started` → `working`, `hil.requested` → `input-required` (an
 * ask: its question; an approval or suspend prompt: what the owner must decide), `hil.resolved` → `working`,
 * `turn.completed` → `completed` (the reply as the `reply` artifact, the task's output; no status message) or `canceled`
 * (`stop_reason: interrupted`), `agent.error` → `failed`, `chat.discarded` → `canceled`.
 *
 * A task still queued while a turn before it on the agent's main loop waits for a human (the owner's
 * approval or suspend answer, or someone's answer to an ask) is `working` with a status message saying
 * what it waits behind, and a blocking send answers with it then instead of holding the caller for up to
 * `a2aWaitMs` with no sign why (docs/mesh.md#a2a).
 *
 * Each task belongs to the requester address that made it (an IPv4 address, an IPv6 /64): get, cancel,
 * resubscribe and answers from elsewhere see no such task. The book keeps at most `maxTasks` tasks,
 * dropping the oldest finished ones first.
 */
import type { Artifact, Message, StreamResponse, Task, TaskState } from '@a2a-js/sdk';
import type { UmbilicalEvent } from '@agt/contracts';

/** A2A v1.0 TaskState and Role numbers (the SDK's enums, written out so this module loads without it). */
export const STATE = {
  submitted: 1,
  working: 2,
  completed: 3,
  failed: 4,
  canceled: 5,
  inputRequired: 6,
  rejected: 7,
} as const;
const ROLE_AGENT = 2;
const TERMINAL = new Set<number>([STATE.completed, STATE.failed, STATE.canceled, STATE.rejected]);
/** States where a stream ends: terminal, or waiting for the client. */
export const isFinal = (state: number) => TERMINAL.has(state) || state === STATE.inputRequired;
export const isTerminal = (state: number) => TERMINAL.has(state);

/** One webhook of a task (A2A push notifications). */
export interface PushConfig {
  id: string;
  url: string;
  token?: string;
}

export const MAX_PUSH_CONFIGS = 5;

export type Waiting =
  | { kind: 'ask'; requestId: string; question: string }
  | { kind: 'approval' | 'suspend'; id: string };

export interface TaskRecord {
  id: string;
  contextId: string;
  agentId: string;
  /** The requester's address bucket. */
  owner: string;
  state: number;
  statusMessage: Message | undefined;
  history: Message[];
  artifacts: Artifact[];
  waiting: Waiting | undefined;
  /** Cancel asked before the turn started: it is interrupted as soon as it does. */
  cancelWanted: boolean;
  /** Still queued, behind a turn that waits for a human: what it waits for (the status message's text). */
  queuedBehind: string | undefined;
  /** The caller's webhooks for this task's updates (push.ts), at most {@link MAX_PUSH_CONFIGS}. */
  push: PushConfig[];
  timestamp: string;
  listeners: Set<(event: StreamResponse) => void>;
}

export const textPart = (text: string) => ({
  content: { $case: 'text' as const, value: text },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

export function agentMessage(
  record: Pick<TaskRecord, 'id' | 'contextId'>,
  text: string,
  messageId = `${record.id}:${Date.now()}`,
): Message {
  return {
    messageId,
    contextId: record.contextId,
    taskId: record.id,
    role: ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** Where tasks are kept to outlive a restart (task-store.ts). */
export interface TaskKeeper {
  save(task: TaskRecord): void;
  /** The kept task, brought up to date with its turn; undefined when none was kept. */
  load(agentId: string, id: string): TaskRecord | undefined;
  /** A page of the kept tasks `keep` accepts, newest first, older than `before` (a cursor of a previous page). */
  page(
    agentId: string,
    keep: (task: TaskRecord) => boolean,
    size: number,
    before?: number,
  ): { tasks: TaskRecord[]; next: number | undefined; total: number };
}

/** A human wait of a turn on an agent's main loop. */
interface HumanWait {
  turnId: string | undefined;
  what: string;
}

export class TaskBook {
  private readonly tasks = new Map<string, TaskRecord>();
  /** Per agent, the waits for a human of its main loop's turns, by task or request id. */
  private readonly humanWaits = new Map<string, Map<string, HumanWait>>();
  private capturing: UmbilicalEvent[] | undefined;

  constructor(
    /** Interrupts a turn (a cancel that came before the turn started). */
    private readonly interrupt: (agentId: string, turnId: string) => void,
    private readonly maxTasks = 2000,
    /** Where tasks are kept beside their turns, to outlive a restart (none: memory only). */
    private readonly store?: TaskKeeper,
    /** Told every update of a task (push notifications). */
    private readonly notify?: (task: TaskRecord, event: StreamResponse) => void,
  ) {}

  /** Keeps a change of the task that is not a state change (its webhooks). */
  save(task: TaskRecord): void {
    this.store?.save(task);
  }

  /**
   * Runs `start` (which queues a turn and returns its id) while keeping the bus events it emits: a
   * turn may start, and even end, before `start` returns, and those events belong to the new task.
   */
  capture(start: () => string): { turnId: string; events: UmbilicalEvent[] } {
    this.capturing = [];
    try {
      const turnId = start();
      return { turnId, events: this.capturing };
    } finally {
      this.capturing = undefined;
    }
  }

  /** The task of turn `id` (made on first sight); `events`: those {@link capture} kept. */
  open(
    input: { id: string; contextId: string; agentId: string; owner: string; message: Message },
    events: readonly UmbilicalEvent[] = [],
  ): TaskRecord {
    const known = this.tasks.get(input.id);
    if (known) return known;
    const task: TaskRecord = {
      ...input,
      state: STATE.submitted,
      statusMessage: undefined,
      history: [{ ...input.message, taskId: input.id, contextId: input.contextId }],
      artifacts: [],
      waiting: undefined,
      cancelWanted: false,
      queuedBehind: undefined,
      push: [],
      timestamp: new Date().toISOString(),
      listeners: new Set(),
    };
    this.tasks.set(input.id, task);
    this.trim();
    this.store?.save(task);
    for (const event of events) this.apply(event);
    this.markQueued(task);
    return task;
  }

  /**
   * The task `id` of requester `owner` on agent `agentId`: in memory, else read back from the agent's file (a
   * restart, or a task that left memory) and followed again from then on; undefined when neither has it.
   */
  get(id: string, owner: string, agentId?: string): TaskRecord | undefined {
    const task = this.tasks.get(id) ?? (agentId ? this.restore(agentId, id) : undefined);
    return task && task.owner === owner ? task : undefined;
  }

  /**
   * A page of requester `owner`'s tasks on the agent, newest first, from the kept records; a task this book
   * follows is given as it is now. Empty without a store.
   */
  list(
    agentId: string,
    owner: string,
    keep: (task: TaskRecord) => boolean,
    size: number,
    before?: number,
  ): { tasks: TaskRecord[]; next: number | undefined; total: number } {
    if (!this.store) return { tasks: [], next: undefined, total: 0 };
    const current = (task: TaskRecord) => this.tasks.get(task.id) ?? task;
    const page = this.store.page(agentId, (task) => task.owner === owner && keep(current(task)), size, before);
    return { ...page, tasks: page.tasks.map(current) };
  }

  private restore(agentId: string, id: string): TaskRecord | undefined {
    const task = this.store?.load(agentId, id);
    if (!task) return undefined;
    this.tasks.set(id, task);
    this.trim();
    return task;
  }

  snapshot(task: TaskRecord, historyLength?: number): Task {
    const history =
      historyLength === undefined ? task.history : historyLength <= 0 ? [] : task.history.slice(-historyLength);
    return {
      id: task.id,
      contextId: task.contextId,
      status: { state: task.state as TaskState, message: task.statusMessage, timestamp: task.timestamp },
      artifacts: task.artifacts,
      history: [...history],
      metadata: undefined,
    };
  }

  /** Listens to the task's updates until the returned function is called. */
  listen(task: TaskRecord, listener: (event: StreamResponse) => void): () => void {
    task.listeners.add(listener);
    return () => task.listeners.delete(listener);
  }

  /**
   * Resolves once the task is final (terminal or input-required), is queued behind a turn that waits
   * for a human, or `ms` passed.
   */
  settled(task: TaskRecord, ms: number): Promise<void> {
    const answerable = () => isFinal(task.state) || task.queuedBehind !== undefined;
    if (answerable()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stop();
        resolve();
      };
      const timer = setTimeout(done, ms);
      const stop = this.listen(task, () => {
        if (answerable()) done();
      });
    });
  }

  /** Records the client's answer (a message on an input-required task) in its history. */
  answered(task: TaskRecord, message: Message): void {
    task.history.push({ ...message, taskId: task.id, contextId: task.contextId });
    this.store?.save(task);
  }

  /** Every bus event goes through here (the mesh extension subscribes it). */
  apply(event: UmbilicalEvent): void {
    this.capturing?.push(event);
    const payload = record(event.payload);
    this.trackHumanWaits(event, payload);
    const ids = new Set<string>();
    if (event.turn_id) ids.add(event.turn_id);
    if (typeof payload.turn_id === 'string') ids.add(payload.turn_id);
    for (const key of ['absorbed_turn_ids', 'turn_ids'])
      if (Array.isArray(payload[key]))
        for (const id of payload[key] as unknown[]) if (typeof id === 'string') ids.add(id);
    for (const id of ids) {
      const task = this.tasks.get(id);
      if (task && task.agentId === event.agent_id && !isTerminal(task.state)) this.step(task, event, payload);
    }
  }

  private step(task: TaskRecord, event: UmbilicalEvent, payload: Record<string, unknown>): void {
    switch (event.event_type) {
      case 'turn.started':
        if (task.cancelWanted) this.interrupt(task.agentId, task.id);
        task.queuedBehind = undefined;
        return this.move(task, STATE.working);
      case 'hil.requested': {
        if (payload.kind === 'ask') {
          task.waiting = { kind: 'ask', requestId: String(payload.requestId), question: String(payload.question) };
          return this.move(task, STATE.inputRequired, String(payload.question));
        }
        const approval = payload.kind === 'approval';
        task.waiting = {
          kind: approval ? 'approval' : 'suspend',
          id: String(approval ? payload.taskId : payload.requestId),
        };
        const what = approval
          ? `its owner's approval to run ${String(payload.tool)}`
          : "its owner's answer to a suspend prompt";
        return this.move(
          task,
          STATE.inputRequired,
          `The agent waits for ${what}. Only the owner can answer it; this task goes on once they do.`,
        );
      }
      case 'hil.resolved':
        task.waiting = undefined;
        return this.move(task, STATE.working);
      case 'turn.completed': {
        task.waiting = undefined;
        if (payload.stop_reason === 'interrupted') return this.move(task, STATE.canceled, 'The task was canceled.');
        const text = typeof payload.text === 'string' ? payload.text : '';
        const artifact: Artifact = {
          artifactId: 'reply',
          name: 'reply',
          description: '',
          parts: [textPart(text)],
          metadata: undefined,
          extensions: [],
        };
        task.artifacts = [artifact];
        this.emit(task, {
          payload: {
            $case: 'artifactUpdate',
            value: {
              taskId: task.id,
              contextId: task.contextId,
              artifact,
              append: false,
              lastChunk: true,
              metadata: undefined,
            },
          },
        });
        // The answer is the task's output: an artifact only (A2A's guidance: messages are for communication,
        // artifacts for outputs), so a client that shows both the status message and artifacts shows it once.
        return this.move(task, STATE.completed);
      }
      case 'agent.error':
        task.waiting = undefined;
        // The code only: the message may name files or hosts of this machine.
        return this.move(task, STATE.failed, `The turn failed (${String(payload.code)}).`);
      case 'chat.discarded':
        return this.move(task, STATE.canceled, `The task was dropped before it ran (${String(payload.reason)}).`);
      default:
        return;
    }
  }

  /** Keeps each agent's main-loop waits for a human current, and tells its queued tasks. */
  private trackHumanWaits(event: UmbilicalEvent, payload: Record<string, unknown>): void {
    const agentId = event.agent_id;
    if (!agentId || (event.loop !== undefined && event.loop !== 'main')) return;
    const waits = this.humanWaits.get(agentId);
    if (event.event_type === 'hil.requested') {
      const id = String(payload.kind === 'approval' ? payload.taskId : payload.requestId);
      const what =
        payload.kind === 'approval'
          ? `its owner's approval to run ${String(payload.tool)}`
          : payload.kind === 'suspend'
            ? "its owner's answer to a suspend prompt"
            : 'the answer to a question it asked';
      const next = waits ?? new Map<string, HumanWait>();
      next.set(id, { turnId: event.turn_id, what });
      this.humanWaits.set(agentId, next);
      for (const task of this.tasks.values()) if (task.agentId === agentId) this.markQueued(task);
      return;
    }
    if (!waits) return;
    if (event.event_type === 'hil.resolved') waits.delete(String(payload.id));
    if ((event.event_type === 'turn.completed' || event.event_type === 'agent.error') && event.turn_id) {
      for (const [id, wait] of waits) if (wait.turnId === event.turn_id) waits.delete(id);
    }
    if (waits.size === 0) this.humanWaits.delete(agentId);
  }

  /** A task not started yet, behind a turn waiting for a human: `working`, saying what it waits behind. */
  private markQueued(task: TaskRecord): void {
    if (task.state !== STATE.submitted || task.queuedBehind !== undefined) return;
    const wait = [...(this.humanWaits.get(task.agentId)?.values() ?? [])].find(
      (candidate) => candidate.turnId !== task.id,
    );
    if (!wait) return;
    task.queuedBehind = `Queued behind another turn of this agent that waits for ${wait.what}; this task starts once that turn has ended. Ask for it again later (GetTask), or cancel it.`;
    this.move(task, STATE.working, task.queuedBehind);
  }

  private move(task: TaskRecord, state: number, text?: string, message?: Message): void {
    task.state = state;
    task.timestamp = new Date().toISOString();
    task.statusMessage = message ?? (text === undefined ? undefined : agentMessage(task, text));
    this.store?.save(task);
    this.emit(task, {
      payload: {
        $case: 'statusUpdate',
        value: {
          taskId: task.id,
          contextId: task.contextId,
          status: { state: state as TaskState, message: task.statusMessage, timestamp: task.timestamp },
          metadata: undefined,
        },
      },
    });
  }

  private emit(task: TaskRecord, event: StreamResponse): void {
    for (const listener of [...task.listeners]) listener(event);
    this.notify?.(task, event);
  }

  private trim(): void {
    if (this.tasks.size <= this.maxTasks) return;
    for (const [id, task] of this.tasks) {
      if (this.tasks.size <= this.maxTasks) return;
      if (isTerminal(task.state) && task.listeners.size === 0) this.tasks.delete(id);
    }
    // All open: the oldest go anyway (memory stays bounded).
    for (const id of this.tasks.keys()) {
      if (this.tasks.size <= this.maxTasks) return;
      this.tasks.delete(id);
    }
  }
}
