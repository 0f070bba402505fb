/**
 * Memory consolidation (docs/memory.md, "Consolidation"): on the agent's own model and under its
 * budgets, merge duplicate memories and update stale ones, with a changelog row for every change and
 * every refused proposal. Off unless the agent's config enables it (`memory.consolidation`), which
 * schedules runs (`every_ms` or `cron`); the owner can also run it at once (the route).
 *
 * Nothing is deleted: merged and forgotten memories are forgotten (kept 30 days like any forgotten
 * memory), an updated memory's previous text is in its changelog row. Pinned memories are never offered
 * to the model and never changed. The model's answer is checked by consolidation-plan.ts; each operation
 * is checked again inside the transaction that applies it (the owner may have pinned or forgotten a
 * memory while the model was thinking).
 */
import { randomUUID } from 'node:crypto';
import { AgtError, type ModelResponse } from '@agt/contracts';
import { cronTime } from '../cron-expression.js';
import { consolidationFailed, consolidationRunning } from './errors.js';
import type { ChangelogEntry, NewChange } from '../memory/changelog-store.js';
import {
  CONSOLIDATION_SYSTEM,
  consolidationPrompt,
  MAX_DETAIL_CHARS,
  readPlan,
  type PlannedOp,
  type Refusal,
} from '../memory/consolidation-plan.js';
import type { Memory } from '../memory/memory-store.js';
import type { MemoryService } from '../memory/service.js';
import type { AgentConfig, EventPayloads, EventType, ModelClient, ModelSettings } from '@agt/contracts';
import type { AgentFile } from '../agents/agent-file.js';
import type { Clock, TimerHandle } from './clock.js';
import type { LogFields } from './types.js';

/** What a run needs of the agent's runtime (AgentRuntime is one). */
export interface ConsolidationHost {
  readonly id: string;
  readonly agent: { readonly id: string; readonly config: AgentConfig; readonly file: AgentFile };
  readonly memory: MemoryService | undefined;
  readonly clock: Clock;
  modelFor(loop: string): Promise<{ client: ModelClient; settings: ModelSettings }>;
  emit<T extends EventType>(type: T, payload: EventPayloads[T], options?: { loop?: string }): void;
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: LogFields): void;
}

export const DEFAULT_MAX_MEMORIES_PER_RUN = 50;
const CONSOLIDATE_TIMEOUT_MS = 120_000;

export interface ConsolidationResult {
  run_id: string;
  /** Memories the model was shown. */
  offered: number;
  changes: ChangelogEntry[];
}

/** One agent's consolidation: its schedule and the one run at a time. */
export class Consolidator {
  private handle: TimerHandle | undefined;
  private running = false;
  private closed = false;

  constructor(private readonly runtime: ConsolidationHost) {}

  /** (Re)arms the schedule from the agent's config; nothing when consolidation is not enabled. */
  arm(): void {
    const clock = this.runtime.clock;
    clock.clearTimeout(this.handle);
    this.handle = undefined;
    const config = this.runtime.agent.config.memory?.consolidation;
    if (this.closed || config?.enabled !== true) return;
    const now = clock.now();
    let next: number | undefined;
    if (config.cron) {
      try {
        next = new (cronTime())(config.cron).getNextDateFrom(new Date(now)).toMillis();
      } catch (error) {
        this.runtime.log(
          'warn',
          `memory consolidation not scheduled: cron ${config.cron}: ${(error as Error).message}`,
          { origin: 'memory', system: true },
        );
        return;
      }
    } else if (config.every_ms) next = now + config.every_ms;
    if (next === undefined) return;
    this.handle = clock.setTimeout(() => void this.scheduled(), Math.max(0, next - now));
  }

  private async scheduled(): Promise<void> {
    this.handle = undefined;
    if (this.closed) return;
    try {
      if (!this.running) await this.run();
    } catch (error) {
      this.runtime.log('warn', `memory consolidation failed: ${(error as Error).message}`, {
        origin: 'memory',
        system: true,
      });
    }
    this.arm();
  }

  close(): void {
    this.closed = true;
    this.runtime.clock.clearTimeout(this.handle);
    this.handle = undefined;
  }

  /** One run: 409 while another runs, 502 when the model call fails (nothing changes then). */
  async run(): Promise<ConsolidationResult> {
    if (this.running) throw consolidationRunning();
    this.running = true;
    try {
      return await this.once();
    } finally {
      this.running = false;
    }
  }

  private async once(): Promise<ConsolidationResult> {
    const runtime = this.runtime;
    const memory = runtime.memory;
    const agent = runtime.agent;
    const runId = randomUUID();
    const max = agent.config.memory?.consolidation?.max_memories_per_run ?? DEFAULT_MAX_MEMORIES_PER_RUN;
    const { memories: offered, cursor } = memory
      ? agent.file.memory.consolidationOffer(max)
      : { memories: [], cursor: null };
    if (!memory || offered.length < 2) return { run_id: runId, offered: offered.length, changes: [] };

    const { client, settings } = await runtime.modelFor('main');
    const startedAt = Date.now();
    let response: ModelResponse;
    try {
      response = await client.complete({
        agentId: runtime.id,
        loop: 'main',
        purpose: 'memory_consolidation',
        model: settings,
        system: CONSOLIDATION_SYSTEM,
        messages: [{ role: 'user', content: consolidationPrompt(offered) }],
        tools: [],
        signal: AbortSignal.timeout(CONSOLIDATE_TIMEOUT_MS),
      });
    } catch (error) {
      if (error instanceof AgtError && error.code === 'budget_exceeded') throw error;
      throw consolidationFailed(error);
    }
    if (response.usage) {
      runtime.emit(
        'llm.completed',
        {
          provider: response.provider,
          model: response.model,
          usage: response.usage,
          cost: response.cost ?? null,
          duration_ms: Math.max(0, Date.now() - startedAt),
          stop_reason: response.stopReason,
        },
        { loop: 'main' },
      );
    }
    const answer = typeof response.text === 'string' ? response.text : '';
    const secrets = await memory.secretsOf(agent);
    // A refused proposal is kept for the owner, unless it holds a credential value.
    const safe = (text: string | null) => {
      if (text === null) return null;
      try {
        memory.check(text.slice(0, MAX_DETAIL_CHARS), secrets);
        return text.slice(0, MAX_DETAIL_CHARS);
      } catch {
        return null;
      }
    };
    const changes: NewChange[] = [];
    const refuse = (refusal: Refusal) =>
      changes.push({
        run_id: runId,
        action: 'refused',
        memory_id: null,
        from_ids: refusal.ids,
        reason: refusal.why,
        detail: safe(refusal.proposal),
      });
    let ops: PlannedOp[] = [];
    try {
      const plan = readPlan(answer, offered);
      plan.refused.forEach(refuse);
      ops = plan.ops.filter((op) => {
        if (op.op === 'forget') return true;
        try {
          op.text = memory.check(op.text, secrets);
          return true;
        } catch (error) {
          refuse({ ids: op.op === 'merge' ? op.ids : [op.id], why: (error as Error).message, proposal: '' });
          return false;
        }
      });
    } catch (error) {
      refuse({ ids: [], why: `unreadable answer: ${(error as Error).message}`, proposal: answer });
    }
    const file = agent.file;
    if (!file.isOpen) throw consolidationFailed(new Error('the agent was unloaded'));

    const created: Memory[] = [];
    const forgotten: number[] = [];
    let updated = false;
    const entries = file.transaction(() => {
      const now = runtime.clock.now();
      for (const op of ops) {
        const ids = op.op === 'merge' ? op.ids : [op.id];
        const current = ids.map((id) => file.memory.get(id));
        if (current.some((m) => !m || m.forgotten_at !== null || m.pinned)) {
          refuse({
            ids,
            why: 'a memory it names was pinned or forgotten during the run',
            proposal: JSON.stringify(op),
          });
          continue;
        }
        if (op.op === 'merge') {
          const kinds = new Set(current.map((m) => m!.kind));
          const merged = file.memory.add(
            { text: op.text, kind: kinds.size === 1 ? current[0]!.kind : 'fact', source: 'consolidation' },
            now,
          );
          for (const id of ids) file.memory.forget(id, now);
          created.push(merged);
          forgotten.push(...ids);
          changes.push({
            run_id: runId,
            action: 'merge',
            memory_id: merged.id,
            from_ids: ids,
            reason: op.reason,
            detail: null,
          });
        } else if (op.op === 'update') {
          file.memory.update(op.id, { text: op.text }, now);
          updated = true;
          changes.push({
            run_id: runId,
            action: 'update',
            memory_id: op.id,
            from_ids: [op.id],
            reason: op.reason,
            detail: current[0]!.text,
          });
        } else {
          file.memory.forget(op.id, now);
          forgotten.push(op.id);
          changes.push({
            run_id: runId,
            action: 'forget',
            memory_id: null,
            from_ids: [op.id],
            reason: op.reason,
            detail: null,
          });
        }
      }
      file.memory.setConsolidationCursor(cursor);
      const first = file.memory.changelog.list(1)[0]?.id ?? 0;
      for (const change of changes) file.memory.changelog.add(change, now);
      return file.memory.changelog
        .list(changes.length)
        .filter((entry) => entry.id > first)
        .reverse();
    });
    memory.announce(agent, created);
    for (const id of forgotten) runtime.emit('memory.forgotten', { memory_id: id, actor: 'consolidation' });
    if (updated) memory.embedInBackground(agent);
    const count = (action: string) => entries.filter((entry) => entry.action === action).length;
    runtime.emit('memory.consolidated', {
      run_id: runId,
      merged: count('merge'),
      updated: count('update'),
      forgotten: count('forget'),
      refused: count('refused'),
    });
    return { run_id: runId, offered: offered.length, changes: entries };
  }
}
