/**
 * What the console reads of the daemon's own HTTP answers, declared here as any HTTP client of agt would
 * declare them: the daemon's route schemas belong to the kernel (`kernel/http-api/`), not to
 * `@agt/contracts`. Each view names only the fields the console reads. They cannot drift from the daemon:
 * `test/http-api-views.ts` makes the type check (`npm run typecheck`, CI) fail when a route's schema no
 * longer gives what a view reads (a field removed, renamed or retyped).
 */

/** An item of `GET /agents`. */
export interface AgentSummaryView {
  id: string;
  name: string;
  handle?: string;
  filePath: string | null;
  autostart: boolean;
  runtimeState: string;
  displayState: string;
}

/** `GET /agents/{id}/status`. */
export interface AgentStatusView {
  id: string;
  name: string;
  runtimeState: string;
}

/** Ledger totals of `GET /usage`. */
export interface SpendTotalsView {
  input: number;
  output: number;
  cached: number;
  calls: number;
  cost_usd: number | null;
}

/** `GET /usage?groupBy=agent`: today's spend per agent. */
export interface DaemonUsageView {
  groups: Array<SpendTotalsView & { key: string }>;
}

/** `GET /agents/{id}/usage`. */
export interface UsageRollupView {
  cost_usd?: number | null;
  totals: { input: number; output: number; total: number };
  byModel: Array<{ model: string; input: number; output: number; total: number; rows: number }>;
}

/** An item of `GET /tasks`: an approval, budget task, ask or suspend prompt waiting for the owner. */
export interface PendingTaskView {
  kind: 'approval' | 'budget' | 'ask' | 'suspend';
  id: string;
  agentId: string;
  agentName: string;
  loop: string;
  createdAt: number;
  tool?: string;
  args?: object;
  question?: string;
  reason?: string;
}

/** A memory as `GET /agents/{id}/memory` and its `POST` and `PATCH` give it (times as ISO strings). */
export interface MemoryItemView {
  id: number;
  text: string;
  kind: 'fact' | 'episode' | 'summary' | 'instruction';
  source: 'agent' | 'owner' | 'compaction' | 'consolidation';
  pinned: boolean;
  created_at: string;
  used_at: string | null;
  forgotten_at: string | null;
}

/** `GET /agents/{id}/memory`: the list, or with `q` a search that says whether it was hybrid or full-text only. */
export interface MemoryListView {
  status: {
    live: number;
    forgotten: number;
    pinned: number;
    embeddings: { configured: boolean; model: string | null; pending: number };
  };
  memories: MemoryItemView[];
  mode?: 'hybrid' | 'fulltext';
  note?: string;
}

/** `POST /agents/{id}/memory` and `PATCH /agents/{id}/memory/{memoryId}`. */
export interface MemoryOneView {
  memory: MemoryItemView;
}

/** One variant's totals in an eval run (`GET /evals/runs`, `GET /evals/runs/{runId}`). */
export interface EvalVariantView {
  label: string;
  model: string | null;
  cases: number;
  passed: number;
  failed: number;
  errors: number;
  passRate: number;
  cost: number | null;
  modelCalls: number;
  toolCalls: number;
  medianMs: number | null;
  flaky: string[];
}

/** An item of `GET /evals/runs` (a run without its case results). */
export interface EvalRunSummaryView {
  id: string;
  suite: string;
  agentId: string;
  agentName: string;
  status: 'running' | 'passed' | 'failed' | 'cancelled' | 'interrupted' | 'error';
  createdAt: string;
  finishedAt: string | null;
  repeat: number;
  total: number;
  variants: EvalVariantView[];
  error?: { code: string; message: string };
}

/** `GET /evals/runs`. */
export interface EvalRunListView {
  runs: EvalRunSummaryView[];
}

/** `GET /evals/runs/{runId}`: the run with every case result so far. */
export interface EvalRunView extends EvalRunSummaryView {
  results: Array<{
    case: string;
    variant: string;
    repeat: number;
    status: 'passed' | 'failed' | 'error';
    answer: string | null;
    modelCalls: number;
    cost: number | null;
    ms: number;
    assertions: Array<{ kind: string; pass: boolean; detail: string }>;
    error?: { code: string; message: string };
  }>;
}

/** `GET /fleet` (the fleet extension): whether this daemon is in a fleet, and NATS's state. */
export interface FleetStatusView {
  configured: boolean;
  fleet: string | null;
  daemon: string | null;
  connected: boolean;
  problem: string | null;
  ttlSeconds: number;
}

/** `GET /fleet/daemons` (the fleet extension): every daemon of the fleet. */
export interface FleetDaemonsView {
  fleet: string;
  daemons: Array<{
    name: string;
    self: boolean;
    alive: boolean;
    heartbeatAt: number | null;
    draining: boolean;
    drainTo: string[];
    drainedSince: number | null;
    agents: Array<{ agentId: string; name: string; handle: string | null }>;
    replication: { enabled: boolean; lagMs?: number } | null;
  }>;
}
