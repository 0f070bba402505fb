/**
 * Eval runs (docs/evals.md): each case of a suite runs on a throwaway copy of an agent (copy.ts), loaded
 * under a fresh id beside the live one, with its tools answered from the case's recording (replay.ts)
 * unless the run asks for live tools; its answer is scored (scorers.ts) and the record kept (results.ts).
 * Runs are bounded in concurrency, can be cancelled, stream their progress as `eval.*` events of the
 * agent they test, and never touch the live agent or its file.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { AgtError, type Logger } from '@agt/contracts';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import type { AgentRegistry } from '../agents/registry.js';
import type { KernelBus } from '../events/bus.js';
import { watchTurns } from '../routes/chat-wait.js';
import type { RuntimeService } from '../runtime/runtime.js';
import { LambdaHost } from '../runtime/sandbox/lambda-runner.js';
import { type CaptureOptions, captureCases } from './capture.js';
import { copyConfig, removeCopy, storedConfig, type VariantChange, writeBase, writeCaseCopy } from './copy.js';
import { ToolReplay } from './replay.js';
import { type CaseResult, type RunRecord, RunStore, type VariantSummary } from './results.js';
import { type CaseOutcome, score } from './scorers.js';
import type { EvalCase, Suite } from './suite.js';

export const MAX_CONCURRENCY = 8;
const DEFAULT_CONCURRENCY = 2;
const DEFAULT_CASE_TIMEOUT_S = 300;

export interface Variant extends VariantChange {
  label?: string;
}

export interface RunRequest {
  suite: Suite;
  /** The agent under test: id, handle or name of a loaded agent, or the absolute path of an agent file. */
  agent: string;
  /** Side by side: each variant runs every case (default one variant: the agent as it is). */
  variants?: Variant[];
  repeat?: number;
  liveTools?: boolean;
  concurrency?: number;
  caseTimeoutS?: number;
}

export interface EvalServiceDeps {
  dataDir: string;
  registry: AgentRegistry;
  runtime: RuntimeService;
  bus: KernelBus;
  logger: Logger;
}

const median = (values: number[]): number | null => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const sumCost = (values: Array<number | null>): number | null =>
  values.some((value) => value === null) ? null : values.reduce<number>((sum, value) => sum + value!, 0);

function labelOf(variant: Variant, index: number): string {
  return variant.label ?? variant.model ?? (index === 0 ? 'agent' : `variant ${index + 1}`);
}

function summarize(record: RunRecord, variants: Variant[]): VariantSummary[] {
  return variants.map((variant, index) => {
    const label = labelOf(variant, index);
    const results = record.results.filter((result) => result.variant === label);
    const passed = results.filter((result) => result.status === 'passed').length;
    const byCase = new Map<string, Set<string>>();
    for (const result of results) byCase.set(result.case, (byCase.get(result.case) ?? new Set()).add(result.status));
    return {
      label,
      model: variant.model ?? null,
      instructions: variant.instructions !== undefined,
      cases: results.length,
      passed,
      failed: results.filter((result) => result.status === 'failed').length,
      errors: results.filter((result) => result.status === 'error').length,
      passRate: results.length ? passed / results.length : 0,
      cost: sumCost(results.map((result) => result.cost)),
      modelCalls: results.reduce((sum, result) => sum + result.modelCalls, 0),
      toolCalls: results.reduce((sum, result) => sum + result.toolCalls.length, 0),
      medianMs: median(results.map((result) => result.ms)),
      flaky: [...byCase].filter(([, statuses]) => statuses.has('passed') && statuses.size > 1).map(([name]) => name),
    };
  });
}

/** Runs `jobs` with at most `limit` at once; stops taking new ones when `signal` fires. */
async function pool<T>(jobs: T[], limit: number, signal: AbortSignal, run: (job: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length && !signal.aborted) await run(jobs[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
}

export class EvalService {
  readonly store: RunStore;
  private readonly active = new Map<string, { controller: AbortController; done: Promise<void> }>();

  constructor(private readonly deps: EvalServiceDeps) {
    this.store = new RunStore(deps.dataDir);
    this.store.settle();
    // Copies a killed daemon left behind: no run of this daemon uses them.
    rmSync(join(deps.dataDir, 'evals', 'work'), { recursive: true, force: true });
  }

  /** Cases from an agent's newest turns (`agt eval capture`). */
  capture(agentRef: string, options: CaptureOptions & { loop?: string }): Suite {
    const agent = this.deps.registry.resolve(agentRef);
    const rows = agent.file.loop.list(options.loop ?? 'main', { limit: -1 });
    const cases = captureCases(agent, rows, options);
    if (cases.length === 0)
      throw new AgtError('not_found', `${agent.name} has no turn to capture${options.since ? ' since then' : ''}`);
    return { name: `${agent.name} (captured ${new Date().toISOString().slice(0, 10)})`, cases };
  }

  /** The file a run copies and the agent it names: a loaded agent, or an agent file by absolute path. */
  private subject(ref: string): { id: string; name: string; filePath: string } {
    if (!isAbsolute(ref)) return this.deps.registry.resolve(ref);
    if (!existsSync(ref) || !statSync(ref).isFile()) throw new AgtError('not_found', `no agent file at ${ref}`);
    let config: { id?: unknown; name?: unknown };
    try {
      config = storedConfig(ref);
    } catch (error) {
      throw new AgtError('bad_request', `${ref} is not an agent file (${(error as Error).message})`);
    }
    return { id: String(config.id), name: String(config.name), filePath: ref };
  }

  start(request: RunRequest): RunRecord {
    const live = this.subject(request.agent);
    const variants = request.variants?.length ? request.variants : [{}];
    const labels = variants.map(labelOf);
    if (new Set(labels).size !== labels.length)
      throw new AgtError('bad_request', 'two variants have the same label: give each a label', {
        details: { field: 'variants' },
      });
    for (const variant of variants)
      if (variant.model !== undefined && !/^[^/\s]+\/\S+$/.test(variant.model))
        throw new AgtError('bad_request', `model ${variant.model} is not provider/model`, {
          details: { field: 'model' },
        });
    const repeat = request.repeat ?? 1;
    const record: RunRecord = {
      id: `ev-${randomUUID()}`,
      suite: request.suite.name,
      agentId: live.id,
      agentName: live.name,
      status: 'running',
      createdAt: new Date().toISOString(),
      finishedAt: null,
      repeat,
      liveTools: request.liveTools === true,
      total: request.suite.cases.length * variants.length * repeat,
      variants: [],
      results: [],
    };
    record.variants = summarize(record, variants);
    this.store.write(record);
    const controller = new AbortController();
    const done = this.execute(record, live, request, variants, controller.signal)
      .catch((error: unknown) => this.deps.logger.error({ err: error, runId: record.id }, 'eval run failed'))
      .finally(() => this.active.delete(record.id));
    this.active.set(record.id, { controller, done });
    return record;
  }

  get(id: string): RunRecord {
    const record = this.store.read(id);
    if (!record) throw new AgtError('not_found', `no eval run ${id}`);
    return record;
  }

  list(): RunRecord[] {
    return this.store.list();
  }

  /** Stops a running run: cases under way are stopped, the rest not started; resolves once it ended. */
  async cancel(id: string): Promise<RunRecord> {
    const run = this.active.get(id);
    if (!run) {
      const record = this.get(id);
      throw new AgtError('conflict', `eval run ${id} is not running (${record.status})`);
    }
    run.controller.abort();
    await run.done;
    return this.get(id);
  }

  /** Shutdown: every run is cancelled and its copies removed. */
  async close(): Promise<void> {
    for (const run of this.active.values()) run.controller.abort();
    await Promise.all([...this.active.values()].map((run) => run.done));
  }

  private emit(
    type: 'eval.run.started' | 'eval.case.finished' | 'eval.run.finished',
    record: RunRecord,
    payload: object,
  ): void {
    this.deps.bus.emit(type, { agentId: record.agentId, payload: { run_id: record.id, ...payload } as never });
  }

  private async execute(
    record: RunRecord,
    live: { filePath: string },
    request: RunRequest,
    variants: Variant[],
    signal: AbortSignal,
  ): Promise<void> {
    const work = join(this.deps.dataDir, 'evals', 'work', record.id);
    const lambdas = new LambdaHost();
    this.emit('eval.run.started', record, {
      suite: record.suite,
      cases: request.suite.cases.length,
      variants: variants.map(labelOf),
      repeat: record.repeat,
    });
    try {
      mkdirSync(work, { recursive: true, mode: 0o700 });
      const bases: string[] = [];
      for (const [index, variant] of variants.entries()) {
        const base = join(work, `base-${index}.agt`);
        await writeBase(live.filePath, base, (config) => copyConfig(config, variant, labelOf(variant, index)));
        bases.push(base);
      }
      const jobs = variants.flatMap((variant, v) =>
        request.suite.cases.flatMap((testCase) =>
          Array.from({ length: record.repeat }, (_, repeat) => ({ variant: labelOf(variant, v), v, testCase, repeat })),
        ),
      );
      let n = 0;
      await pool(jobs, request.concurrency ?? DEFAULT_CONCURRENCY, signal, async (job) => {
        const path = join(work, `case-${n++}.agt`);
        const result = await this.runCase(job.testCase, job.variant, job.repeat, bases[job.v]!, path, {
          liveTools: record.liveTools,
          timeoutS: request.caseTimeoutS ?? DEFAULT_CASE_TIMEOUT_S,
          lambdas,
          signal,
        });
        if (signal.aborted && result.status === 'error') return;
        record.results.push(result);
        record.variants = summarize(record, variants);
        this.store.write(record);
        this.emit('eval.case.finished', record, {
          case: result.case,
          variant: result.variant,
          repeat: result.repeat,
          status: result.status,
          ms: result.ms,
          done: record.results.length,
          total: record.total,
        });
      });
      record.status = signal.aborted
        ? 'cancelled'
        : record.results.every((result) => result.status === 'passed')
          ? 'passed'
          : 'failed';
    } catch (error) {
      record.status = 'error';
      record.error = {
        code: error instanceof AgtError ? error.code : 'internal',
        message: error instanceof Error ? error.message : String(error),
      };
    } finally {
      lambdas.close();
      rmSync(work, { recursive: true, force: true });
      record.finishedAt = new Date().toISOString();
      record.variants = summarize(record, variants);
      this.store.write(record);
      this.store.prune();
      const count = (status: string) => record.results.filter((result) => result.status === status).length;
      this.emit('eval.run.finished', record, {
        status: record.status,
        passed: count('passed'),
        failed: count('failed'),
        errors: count('error'),
      });
    }
  }

  private async runCase(
    testCase: EvalCase,
    variant: string,
    repeat: number,
    base: string,
    path: string,
    options: { liveTools: boolean; timeoutS: number; lambdas: LambdaHost; signal: AbortSignal },
  ): Promise<CaseResult> {
    const { registry, runtime, bus } = this.deps;
    const started = performance.now();
    const result: CaseResult = {
      case: testCase.name,
      variant,
      repeat,
      status: 'error',
      answer: null,
      modelCalls: 0,
      toolCalls: [],
      cost: null,
      ms: 0,
      assertions: [],
    };
    let agent: LoadedAgent | undefined;
    try {
      writeCaseCopy(base, path, testCase);
      agent = await registry.load(path, { asNew: true });
      if (!options.liveTools) runtime.replays.set(agent.id, new ToolReplay(testCase.recorded?.tools ?? []));
      const turns = runtime.byId(agent.id);
      if (!turns) throw new AgtError('unavailable', 'the eval copy has no runtime');
      const watch = watchTurns(bus, agent.id);
      const stop = () => watch.cancel();
      options.signal.addEventListener('abort', stop, { once: true });
      let outcome: Awaited<ReturnType<typeof watch.wait>>;
      try {
        const turnId = turns.chat('main', testCase.input);
        outcome = await watch.wait(turnId, options.timeoutS);
        result.ms = Math.round(performance.now() - started);
        if (!outcome) {
          result.error = options.signal.aborted
            ? { code: 'cancelled', message: 'the run was cancelled' }
            : { code: 'timeout', message: `the turn did not end within ${options.timeoutS} s` };
          return result;
        }
        if (outcome.status !== 'completed') {
          result.error = outcome.error ?? { code: outcome.status, message: 'the turn did not complete' };
          return result;
        }
        const rows = agent.file.loop.ofTurn('main', turnId);
        const outcomeOf: CaseOutcome = {
          answer: outcome.text,
          modelCalls: outcome.llmCalls,
          toolCalls: rows.flatMap((row) =>
            row.role === 'assistant'
              ? ((row.content as { toolCalls?: Array<{ name: string; args: unknown }> }).toolCalls ?? []).map(
                  (call) => ({ name: call.name, args: call.args }),
                )
              : [],
          ),
          cost: sumCost(rows.filter((row) => row.role === 'assistant').map((row) => row.cost)),
        };
        Object.assign(result, outcomeOf);
      } finally {
        options.signal.removeEventListener('abort', stop);
      }
      const copy = agent;
      for (const assertion of testCase.assert) {
        const verdict = await score(assertion, testCase, result, {
          judgeClient: (provider) => runtime.modelClient(copy, provider),
          lambdas: options.lambdas,
          signal: options.signal,
        });
        if (verdict.cost !== undefined && result.cost !== null) result.cost += verdict.cost;
        const { cost: _cost, ...shown } = verdict;
        result.assertions.push(shown);
      }
      result.status = result.assertions.every((assertion) => assertion.pass) ? 'passed' : 'failed';
      return result;
    } catch (error) {
      result.ms = Math.round(performance.now() - started);
      result.error = {
        code: error instanceof AgtError ? error.code : 'internal',
        message: error instanceof Error ? error.message : String(error),
      };
      return result;
    } finally {
      if (agent) {
        runtime.replays.delete(agent.id);
        await registry.unload(agent, { reason: 'eval', graceMs: 0 });
      }
      removeCopy(path);
    }
  }
}
