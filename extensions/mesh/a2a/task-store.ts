/**
 * A2A tasks outlive a restart: each change of a task is written to the agent's file beside the turn it is
 * (`ctx.agents.turns.records`, kind `mesh.a2a-task`), and a task asked for that is not in memory is read back
 * from there. What happened to the turn while nobody followed it (the daemon was down, or the task had left
 * memory) is read from the kernel on the way in: a turn still queued or running is `submitted` or `working`,
 * one waiting on an ask is `input-required` again (with the ask it waits on now), and one that ended is
 * `completed` with its last answer from the loop's history, or `failed` when none is there.
 */
import type { Artifact, Message } from '@a2a-js/sdk';
import type { AgentTurnsAccess, Logger } from '@agt/contracts';
import {
  agentMessage,
  isTerminal,
  type PushConfig,
  STATE,
  type TaskKeeper,
  type TaskRecord,
  textPart,
  type Waiting,
} from './tasks.js';

export const TASK_KIND = 'mesh.a2a-task';

/** What is written of a task (its listeners and in-memory flags are not). */
interface StoredTask {
  contextId: string;
  owner: string;
  state: number;
  statusMessage?: Message;
  history: Message[];
  artifacts: Artifact[];
  waiting?: Waiting;
  push?: PushConfig[];
  timestamp: string;
}

/** Bytes of a file part are not kept (a record stays small): the part says what it was. */
function storable(message: Message): Message {
  return {
    ...message,
    parts: message.parts.map((part) =>
      part.content?.$case === 'raw'
        ? textPart(
            `[${part.filename || 'file'} (${part.mediaType || 'bytes'}), ${part.content.value.length} bytes, not kept]`,
          )
        : part,
    ),
  } as Message;
}

export class TaskStore implements TaskKeeper {
  constructor(
    private readonly turns: () => AgentTurnsAccess | undefined,
    private readonly logger: Logger,
  ) {}

  save(task: TaskRecord): void {
    const records = this.turns()?.records;
    if (!records) return;
    const stored: StoredTask = {
      contextId: task.contextId,
      owner: task.owner,
      state: task.state,
      ...(task.statusMessage ? { statusMessage: storable(task.statusMessage) } : {}),
      history: task.history.map(storable),
      artifacts: task.artifacts,
      ...(task.waiting ? { waiting: task.waiting } : {}),
      ...(task.push.length > 0 ? { push: task.push } : {}),
      timestamp: task.timestamp,
    };
    try {
      records.put(task.agentId, TASK_KIND, task.id, stored);
    } catch (error) {
      // The agent was unloaded meanwhile, or the record is too big: the task lives on in memory.
      this.logger.warn({ err: error, agentId: task.agentId, taskId: task.id }, 'a2a: could not keep the task');
    }
  }

  /**
   * One page of the agent's kept tasks that `keep` accepts, newest first, after the cursor `before` (a `seq`),
   * with the cursor of the next page and how many match in all. Tasks as kept (not caught up with their turns:
   * the caller prefers the ones it follows in memory).
   */
  page(
    agentId: string,
    keep: (task: TaskRecord) => boolean,
    size: number,
    before?: number,
  ): { tasks: TaskRecord[]; next: number | undefined; total: number } {
    const records = this.turns()?.records;
    const tasks: TaskRecord[] = [];
    let next: number | undefined;
    let total = 0;
    let lastSeq = 0;
    if (!records) return { tasks, next, total };
    // Every kept task of the agent is read (at most 10,000) so `total` is exact, in pages of 500.
    for (let cursor: number | undefined; ; ) {
      const rows = records.list(agentId, TASK_KIND, {
        limit: 500,
        ...(cursor === undefined ? {} : { before: cursor }),
      });
      for (const row of rows) {
        const task = fromStored(agentId, row.turnId, row.record as StoredTask);
        if (!keep(task)) continue;
        total++;
        if (before !== undefined && row.seq >= before) continue;
        if (tasks.length < size) {
          tasks.push(task);
          lastSeq = row.seq;
        } else next ??= lastSeq;
      }
      if (rows.length < 500) break;
      cursor = rows.at(-1)!.seq;
    }
    return { tasks, next, total };
  }

  /** The stored task `id` of the agent, brought up to date with its turn; undefined when none was kept. */
  load(agentId: string, id: string): TaskRecord | undefined {
    const turns = this.turns();
    let found: ReturnType<NonNullable<AgentTurnsAccess['records']>['get']>;
    try {
      found = turns?.records?.get(agentId, TASK_KIND, id);
    } catch {
      return undefined;
    }
    if (!turns || !found) return undefined;
    const task = fromStored(agentId, id, found.record as StoredTask);
    if (!isTerminal(task.state)) this.catchUp(turns, task);
    return task;
  }

  /** The state of the task's turn now, for a task that was not followed meanwhile. */
  private catchUp(turns: AgentTurnsAccess, task: TaskRecord): void {
    const before = task.state;
    const place = turns.place(task.agentId, task.id);
    const ask = turns.asks(task.agentId).find((pending) => pending.turnId === task.id);
    const approval = turns.approvals(task.agentId).find((pending) => pending.turnId === task.id);
    if (place === 'queued') set(task, STATE.submitted);
    else if (ask) {
      task.waiting = { kind: 'ask', requestId: ask.requestId, question: ask.question };
      set(task, STATE.inputRequired, agentMessage(task, ask.question));
    } else if (approval) {
      task.waiting = { kind: 'approval', id: approval.taskId };
      set(
        task,
        STATE.inputRequired,
        agentMessage(
          task,
          `The agent waits for its owner's approval to run ${approval.tool}. Only the owner can answer it; this task goes on once they do.`,
        ),
      );
    } else if (place === 'running') {
      task.waiting = undefined;
      set(task, STATE.working);
    } else {
      task.waiting = undefined;
      const answer = turns
        .history(task.agentId, { limit: 500 })
        .filter((row) => row.turnId === task.id && row.role === 'assistant' && row.kind === 'message')
        .at(-1);
      if (answer) {
        task.artifacts = [
          {
            artifactId: 'reply',
            name: 'reply',
            description: '',
            parts: [textPart(answer.content)],
            metadata: undefined,
            extensions: [],
          },
        ];
        set(task, STATE.completed);
      } else
        set(
          task,
          STATE.failed,
          agentMessage(task, 'The turn ended while the task was not followed; it left no answer.'),
        );
    }
    if (task.state !== before || task.state === STATE.completed || task.state === STATE.failed) this.save(task);
  }
}

function fromStored(agentId: string, id: string, stored: StoredTask): TaskRecord {
  return {
    id,
    agentId,
    contextId: stored.contextId,
    owner: stored.owner,
    state: stored.state,
    statusMessage: stored.statusMessage,
    history: stored.history ?? [],
    artifacts: stored.artifacts ?? [],
    waiting: stored.waiting,
    cancelWanted: false,
    queuedBehind: undefined,
    push: stored.push ?? [],
    timestamp: stored.timestamp,
    listeners: new Set(),
  };
}

function set(task: TaskRecord, state: number, message?: Message): void {
  task.state = state;
  task.statusMessage = message;
  task.timestamp = new Date().toISOString();
}
