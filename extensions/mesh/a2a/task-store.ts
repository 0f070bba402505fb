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
import { agentMessage, isTerminal, STATE, type TaskKeeper, type TaskRecord, textPart, type Waiting } from './tasks.js';

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
      timestamp: task.timestamp,
    };
    try {
      records.put(task.agentId, TASK_KIND, task.id, stored);
    } catch (error) {
      // The agent was unloaded meanwhile, or the record is too big: the task lives on in memory.
      this.logger.warn({ err: error, agentId: task.agentId, taskId: task.id }, 'a2a: could not keep the task');
    }
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
    const stored = found.record as StoredTask;
    const task: TaskRecord = {
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
      timestamp: stored.timestamp,
      listeners: new Set(),
    };
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

function set(task: TaskRecord, state: number, message?: Message): void {
  task.state = state;
  task.statusMessage = message;
  task.timestamp = new Date().toISOString();
}
