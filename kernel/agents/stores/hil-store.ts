/**
 * Human in the loop, kept in the file: approval tasks (`agt_tasks`) and the owner prompts of the `ask`
 * tool and of suspend requests (`agt_prompts`). The runtime's HIL service ({@link ../../runtime/hil.ts})
 * holds the waiting turns' promises in memory; these rows are what a restart keeps.
 *
 * `delivered` says whether the decision reached the waiting turn: a decision given while no turn waited
 * (after a restart, before the resumed turn got back to the call) stays undelivered until the resumed turn
 * picks it up. Finished rows are bounded ({@link MAX_FINISHED_HIL_ROWS} per table, oldest go first);
 * open ones are never dropped.
 */
import { parseJson, toJson, type Sql } from '../sql.js';

export const MAX_FINISHED_HIL_ROWS = 500;

export const TASK_STATUSES = [
  'pending',
  'pending_approval',
  'running',
  'completed',
  'failed',
  'denied',
  'cancelled',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export interface TaskResolution {
  action: 'approve' | 'deny';
  reason?: string;
  modifiedArgs?: Record<string, unknown>;
}

/** `approval`: a restricted tool call; `budget`: a model call that would pass a budget (docs/costs.md). */
export type TaskKind = 'approval' | 'budget';

export interface TaskRecord {
  id: string;
  kind: TaskKind;
  status: TaskStatus;
  tool: string;
  args: Record<string, unknown>;
  loop: string;
  turnId: string | null;
  /** The model's tool call id this task gates (how a resumed turn finds it again). */
  callId: string | null;
  resolution: TaskResolution | null;
  result: string | null;
  error: string | null;
  delivered: boolean;
  createdAt: number;
  updatedAt: number;
}

export type PromptKind = 'ask' | 'suspend';
/** `pending`, then `answered` (ask), `resumed` / `declined` (suspend) or `cancelled`. */
/**
 * `answered_by_caller`: an ask answered by whoever sent the turn's message (an A2A caller), not the owner.
 * `superseded`: its call, resumed after a restart, asked a different question (hil.ts).
 */
export type PromptStatus =
  | 'pending'
  | 'answered'
  | 'answered_by_caller'
  | 'resumed'
  | 'declined'
  | 'cancelled'
  | 'superseded';

export interface PromptRecord {
  id: string;
  kind: PromptKind;
  status: PromptStatus;
  /** The question (ask) or the reason (suspend). */
  text: string;
  answer: string | null;
  loop: string;
  turnId: string | null;
  callId: string | null;
  /** An ask's answer schema (`ToolContext.ask`'s `schema`), when the asker gave one. */
  schema?: Record<string, unknown>;
  delivered: boolean;
  createdAt: number;
  updatedAt: number;
}

interface RawTask {
  id: string;
  kind: string;
  status: string;
  tool: string;
  args: string;
  loop: string;
  turn_id: string | null;
  call_id: string | null;
  resolution: string | null;
  result: string | null;
  error: string | null;
  delivered: number;
  created_at: number;
  updated_at: number;
}

interface RawPrompt {
  id: string;
  kind: string;
  status: string;
  text: string;
  answer: string | null;
  loop: string;
  turn_id: string | null;
  call_id: string | null;
  schema: string | null;
  delivered: number;
  created_at: number;
  updated_at: number;
}

const asObject = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

const decodeTask = (row: RawTask): TaskRecord => ({
  id: row.id,
  kind: row.kind === 'budget' ? 'budget' : 'approval',
  status: row.status as TaskStatus,
  tool: row.tool,
  args: asObject(parseJson(row.args)),
  loop: row.loop,
  turnId: row.turn_id,
  callId: row.call_id,
  resolution: row.resolution === null ? null : (parseJson(row.resolution) as TaskResolution),
  result: row.result,
  error: row.error,
  delivered: row.delivered === 1,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const decodePrompt = (row: RawPrompt): PromptRecord => ({
  id: row.id,
  kind: row.kind as PromptKind,
  status: row.status as PromptStatus,
  text: row.text,
  answer: row.answer,
  loop: row.loop,
  turnId: row.turn_id,
  callId: row.call_id,
  ...(row.schema ? { schema: asObject(parseJson(row.schema)) } : {}),
  delivered: row.delivered === 1,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Open: waiting for the owner, or decided while no turn waited and not yet picked up. */
const OPEN_TASK = "(status = 'pending_approval' OR (delivered = 0 AND status IN ('running', 'denied')))";
const OPEN_PROMPT =
  "(status = 'pending' OR (delivered = 0 AND status IN ('answered', 'answered_by_caller', 'resumed', 'declined')))";
/** Several turn ids as one JSON array parameter (an end that names a burst's absorbed chats). */
const TURN_IDS = '(SELECT value FROM json_each(?))';
const FINISHED_TASK = "status NOT IN ('pending', 'pending_approval', 'running')";

export type TaskPatch = Partial<
  Pick<TaskRecord, 'status' | 'resolution' | 'result' | 'error' | 'delivered' | 'updatedAt'>
>;
export type PromptPatch = Partial<Pick<PromptRecord, 'status' | 'answer' | 'delivered' | 'updatedAt'>>;

export class HilRecordStore {
  constructor(private readonly sql: Sql) {}

  // ---- approval tasks ---------------------------------------------------------------------------

  /** Commits a new task and drops the oldest finished ones beyond the bound. */
  insertTask(task: TaskRecord): void {
    this.sql.transaction(() => {
      this.sql.run(
        `INSERT INTO agt_tasks (id, kind, status, tool, args, loop, turn_id, call_id, resolution, result, error, delivered, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        task.id,
        task.kind,
        task.status,
        task.tool,
        JSON.stringify(task.args ?? {}),
        task.loop,
        task.turnId,
        task.callId,
        toJson(task.resolution),
        task.result,
        task.error,
        task.delivered,
        task.createdAt,
        task.updatedAt,
      );
      const excess =
        this.sql.one<{ n: number }>(`SELECT count(*) AS n FROM agt_tasks WHERE ${FINISHED_TASK}`)!.n -
        MAX_FINISHED_HIL_ROWS;
      if (excess > 0)
        this.sql.run(
          `DELETE FROM agt_tasks WHERE seq IN (SELECT seq FROM agt_tasks WHERE ${FINISHED_TASK} ORDER BY seq LIMIT ?)`,
          excess,
        );
    });
  }

  getTask(id: string): TaskRecord | undefined {
    const row = this.sql.one<RawTask>('SELECT * FROM agt_tasks WHERE id = ?', id);
    return row && decodeTask(row);
  }

  /** Commits the given fields; false when no such task. */
  updateTask(id: string, patch: TaskPatch): boolean {
    const sets: string[] = [];
    const values: Array<string | number | boolean | null> = [];
    if (patch.status !== undefined) sets.push('status = ?'), values.push(patch.status);
    if (patch.resolution !== undefined) sets.push('resolution = ?'), values.push(toJson(patch.resolution));
    if (patch.result !== undefined) sets.push('result = ?'), values.push(patch.result);
    if (patch.error !== undefined) sets.push('error = ?'), values.push(patch.error);
    if (patch.delivered !== undefined) sets.push('delivered = ?'), values.push(patch.delivered);
    sets.push('updated_at = ?');
    values.push(patch.updatedAt ?? Date.now());
    return this.sql.run(`UPDATE agt_tasks SET ${sets.join(', ')} WHERE id = ?`, ...values, id).changes > 0;
  }

  /** The newest `limit` tasks (of one status when given), oldest first. */
  listTasks(status: string | undefined, limit: number): TaskRecord[] {
    const rows =
      status === undefined
        ? this.sql.all<RawTask>('SELECT * FROM agt_tasks ORDER BY seq DESC LIMIT ?', limit)
        : this.sql.all<RawTask>('SELECT * FROM agt_tasks WHERE status = ? ORDER BY seq DESC LIMIT ?', status, limit);
    return rows.map(decodeTask).reverse();
  }

  /** The task gating one tool call of one turn (the newest, should there be several). */
  taskForCall(turnId: string, callId: string): TaskRecord | undefined {
    const row = this.sql.one<RawTask>(
      'SELECT * FROM agt_tasks WHERE turn_id = ? AND call_id = ? ORDER BY seq DESC LIMIT 1',
      turnId,
      callId,
    );
    return row && decodeTask(row);
  }

  /** Open tasks (pending, or decided and not yet picked up), oldest first; of one turn when given. */
  openTasks(turnId?: string | readonly string[]): TaskRecord[] {
    const rows =
      turnId === undefined
        ? this.sql.all<RawTask>(`SELECT * FROM agt_tasks WHERE ${OPEN_TASK} ORDER BY seq`)
        : typeof turnId === 'string'
          ? this.sql.all<RawTask>(`SELECT * FROM agt_tasks WHERE turn_id = ? AND ${OPEN_TASK} ORDER BY seq`, turnId)
          : this.sql.all<RawTask>(
              `SELECT * FROM agt_tasks WHERE turn_id IN ${TURN_IDS} AND ${OPEN_TASK} ORDER BY seq`,
              JSON.stringify(turnId),
            );
    return rows.map(decodeTask);
  }

  /** Approved tasks whose tool had started when the daemon stopped (delivered and still `running`). */
  interruptedTasks(): TaskRecord[] {
    return this.sql
      .all<RawTask>("SELECT * FROM agt_tasks WHERE status = 'running' AND delivered = 1 ORDER BY seq")
      .map(decodeTask);
  }

  // ---- asks and suspend prompts -----------------------------------------------------------------

  insertPrompt(prompt: PromptRecord): void {
    this.sql.transaction(() => {
      this.sql.run(
        `INSERT INTO agt_prompts (id, kind, status, text, answer, loop, turn_id, call_id, schema, delivered, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        prompt.id,
        prompt.kind,
        prompt.status,
        prompt.text,
        prompt.answer,
        prompt.loop,
        prompt.turnId,
        prompt.callId,
        prompt.schema ? JSON.stringify(prompt.schema) : null,
        prompt.delivered,
        prompt.createdAt,
        prompt.updatedAt,
      );
      const excess =
        this.sql.one<{ n: number }>("SELECT count(*) AS n FROM agt_prompts WHERE status <> 'pending'")!.n -
        MAX_FINISHED_HIL_ROWS;
      if (excess > 0)
        this.sql.run(
          "DELETE FROM agt_prompts WHERE seq IN (SELECT seq FROM agt_prompts WHERE status <> 'pending' ORDER BY seq LIMIT ?)",
          excess,
        );
    });
  }

  getPrompt(id: string): PromptRecord | undefined {
    const row = this.sql.one<RawPrompt>('SELECT * FROM agt_prompts WHERE id = ?', id);
    return row && decodePrompt(row);
  }

  updatePrompt(id: string, patch: PromptPatch): boolean {
    const sets: string[] = [];
    const values: Array<string | number | boolean | null> = [];
    if (patch.status !== undefined) sets.push('status = ?'), values.push(patch.status);
    if (patch.answer !== undefined) sets.push('answer = ?'), values.push(patch.answer);
    if (patch.delivered !== undefined) sets.push('delivered = ?'), values.push(patch.delivered);
    sets.push('updated_at = ?');
    values.push(patch.updatedAt ?? Date.now());
    return this.sql.run(`UPDATE agt_prompts SET ${sets.join(', ')} WHERE id = ?`, ...values, id).changes > 0;
  }

  /** Pending prompts of one kind, oldest first (of one loop when given). */
  pendingPrompts(kind: PromptKind, loop?: string): PromptRecord[] {
    const rows =
      loop === undefined
        ? this.sql.all<RawPrompt>("SELECT * FROM agt_prompts WHERE kind = ? AND status = 'pending' ORDER BY seq", kind)
        : this.sql.all<RawPrompt>(
            "SELECT * FROM agt_prompts WHERE kind = ? AND status = 'pending' AND loop = ? ORDER BY seq",
            kind,
            loop,
          );
    return rows.map(decodePrompt);
  }

  promptForCall(kind: PromptKind, turnId: string, callId: string): PromptRecord | undefined {
    const row = this.sql.one<RawPrompt>(
      'SELECT * FROM agt_prompts WHERE kind = ? AND turn_id = ? AND call_id = ? ORDER BY seq DESC LIMIT 1',
      kind,
      turnId,
      callId,
    );
    return row && decodePrompt(row);
  }

  /** Open prompts (pending, or answered and not yet picked up), oldest first; of one turn when given. */
  openPrompts(turnId?: string | readonly string[]): PromptRecord[] {
    const rows =
      turnId === undefined
        ? this.sql.all<RawPrompt>(`SELECT * FROM agt_prompts WHERE ${OPEN_PROMPT} ORDER BY seq`)
        : typeof turnId === 'string'
          ? this.sql.all<RawPrompt>(
              `SELECT * FROM agt_prompts WHERE turn_id = ? AND ${OPEN_PROMPT} ORDER BY seq`,
              turnId,
            )
          : this.sql.all<RawPrompt>(
              `SELECT * FROM agt_prompts WHERE turn_id IN ${TURN_IDS} AND ${OPEN_PROMPT} ORDER BY seq`,
              JSON.stringify(turnId),
            );
    return rows.map(decodePrompt);
  }
}
