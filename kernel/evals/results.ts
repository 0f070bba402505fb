/**
 * Eval run records (docs/evals.md, "Results"): one JSON file per run in `<dataDir>/evals/runs/`, written
 * as each case ends (atomically: temp file and rename), so a run's record is readable while it runs and
 * after the daemon restarts. Retention keeps the newest {@link KEEP_RUNS} runs and none older than
 * {@link KEEP_DAYS} days. A run the daemon stopped in the middle reads back as `interrupted`.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const KEEP_RUNS = 200;
export const KEEP_DAYS = 30;

export type RunStatus = 'running' | 'passed' | 'failed' | 'cancelled' | 'interrupted' | 'error';
export type CaseStatus = 'passed' | 'failed' | 'error';

export interface CaseResult {
  case: string;
  variant: string;
  repeat: number;
  status: CaseStatus;
  answer: string | null;
  modelCalls: number;
  toolCalls: Array<{ name: string; args: unknown }>;
  /** USD of the case's turn and its judges; null when a price was unknown. */
  cost: number | null;
  ms: number;
  assertions: Array<{ kind: string; pass: boolean; detail: string; score?: number }>;
  error?: { code: string; message: string };
}

export interface VariantSummary {
  label: string;
  model: string | null;
  instructions: boolean;
  cases: number;
  passed: number;
  failed: number;
  errors: number;
  passRate: number;
  cost: number | null;
  modelCalls: number;
  toolCalls: number;
  medianMs: number | null;
  /** Cases that both passed and failed over the repeats. */
  flaky: string[];
}

export interface RunRecord {
  id: string;
  suite: string;
  agentId: string;
  agentName: string;
  status: RunStatus;
  createdAt: string;
  finishedAt: string | null;
  repeat: number;
  liveTools: boolean;
  total: number;
  variants: VariantSummary[];
  results: CaseResult[];
  error?: { code: string; message: string };
}

const ID_PATTERN = /^ev-[0-9a-f-]{36}$/;

export class RunStore {
  readonly folder: string;

  constructor(dataDir: string) {
    this.folder = join(dataDir, 'evals', 'runs');
  }

  private path(id: string): string {
    return join(this.folder, `${id}.json`);
  }

  write(record: RunRecord): void {
    mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    const temp = `${this.path(record.id)}.tmp`;
    writeFileSync(temp, JSON.stringify(record), { mode: 0o600 });
    renameSync(temp, this.path(record.id));
  }

  read(id: string): RunRecord | undefined {
    if (!ID_PATTERN.test(id)) return undefined;
    try {
      const record = JSON.parse(readFileSync(this.path(id), 'utf8')) as RunRecord;
      return record;
    } catch {
      return undefined;
    }
  }

  /** Every stored run, newest first. */
  list(): RunRecord[] {
    let names: string[] = [];
    try {
      names = readdirSync(this.folder).filter((name) => name.endsWith('.json'));
    } catch {
      return [];
    }
    return names
      .map((name) => this.read(name.slice(0, -5)))
      .filter((record): record is RunRecord => record !== undefined)
      .sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
  }

  /** Runs left `running` by a daemon that stopped become `interrupted`; then retention applies. */
  settle(now = Date.now()): void {
    const runs = this.list();
    for (const run of runs) {
      if (run.status !== 'running') continue;
      this.write({ ...run, status: 'interrupted', finishedAt: run.finishedAt ?? new Date(now).toISOString() });
    }
    this.prune(now);
  }

  prune(now = Date.now()): void {
    const oldest = now - KEEP_DAYS * 86_400_000;
    this.list().forEach((run, index) => {
      if (run.status === 'running') return;
      if (index >= KEEP_RUNS || Date.parse(run.createdAt) < oldest) rmSync(this.path(run.id), { force: true });
    });
    // Temp files of a write a crash cut short.
    try {
      for (const name of readdirSync(this.folder))
        if (name.endsWith('.tmp') && statSync(join(this.folder, name)).mtimeMs < now - 60_000)
          rmSync(join(this.folder, name), { force: true });
    } catch {
      // No folder yet: nothing to prune.
    }
  }
}
