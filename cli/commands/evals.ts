/**
 * `agt eval …` (docs/evals.md): capture cases from an agent's history, run a suite on throwaway copies of an
 * agent (exit 1 when a case fails, so CI can gate on it), compare variants, write JSON and JUnit XML.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';

/** One case result as `agt eval` reads it (test/http-api-views.ts checks it against the route). */
export interface EvalCaseResult {
  case: string;
  variant: string;
  repeat: number;
  status: 'passed' | 'failed' | 'error';
  answer: string | null;
  modelCalls: number;
  toolCalls: Array<{ name: string; args: unknown }>;
  cost: number | null;
  ms: number;
  assertions: Array<{ kind: string; pass: boolean; detail: string; score?: number }>;
  error?: { code: string; message: string };
}

export interface EvalVariantSummary {
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

/** `GET /evals/runs/{id}` as `agt eval` reads it. */
export interface EvalRunView {
  id: string;
  suite: string;
  agentName: string;
  status: string;
  createdAt: string;
  finishedAt: string | null;
  repeat: number;
  total: number;
  variants: EvalVariantSummary[];
  results: EvalCaseResult[];
  error?: { code: string; message: string };
}

const POLL_MS = 300;

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`, EXIT.usage);
  }
}

const money = (usd: number | null) => (usd === null ? '?' : `$${usd.toFixed(usd < 0.01 ? 6 : 4)}`);
const percent = (rate: number) => `${Math.round(rate * 100)}%`;

export async function capture(
  ctx: Ctx,
  agent: string,
  options: { turns?: string; since?: string; loop?: string; output?: string },
): Promise<void> {
  const turns = options.turns === undefined ? undefined : Number(options.turns);
  if (turns !== undefined && (!Number.isInteger(turns) || turns < 1))
    throw new CliError('--turns takes a whole number of at least 1', EXIT.usage);
  const since = options.since === undefined ? undefined : new Date(options.since);
  if (since && Number.isNaN(since.getTime())) throw new CliError('--since takes a date and time', EXIT.usage);
  const suite = await ctx.client.post<{ name: string; cases: unknown[] }>('/evals/capture', {
    agent,
    ...(turns !== undefined ? { turns } : {}),
    ...(since ? { since: since.toISOString() } : {}),
    ...(options.loop ? { loop: options.loop } : {}),
  });
  const text = `${JSON.stringify(suite, null, 2)}\n`;
  if (!options.output) return void process.stdout.write(text);
  writeFileSync(options.output, text);
  ctx.out.note(`${suite.cases.length} case(s) written to ${options.output}`);
}

/** JUnit XML of a run: one test suite per variant, one test case per case run. */
export function junit(run: EvalRunView): string {
  const xml = (text: string) =>
    text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
  const suites = run.variants.map((variant) => {
    const results = run.results.filter((result) => result.variant === variant.label);
    const cases = results.map((result) => {
      const name = xml(run.repeat > 1 ? `${result.case} #${result.repeat + 1}` : result.case);
      const head = `    <testcase classname="${xml(`${run.suite}.${variant.label}`)}" name="${name}" time="${(result.ms / 1000).toFixed(3)}"`;
      if (result.status === 'passed') return `${head}/>`;
      const failed = result.assertions.filter((assertion) => !assertion.pass).map((a) => `${a.kind}: ${a.detail}`);
      const body =
        result.status === 'error'
          ? `<error type="${xml(result.error?.code ?? 'error')}" message="${xml(result.error?.message ?? '')}"/>`
          : `<failure message="${xml(failed.join('; '))}">${xml(`answer: ${result.answer ?? ''}`)}</failure>`;
      return `${head}>\n      ${body}\n    </testcase>`;
    });
    const seconds = results.reduce((sum, result) => sum + result.ms, 0) / 1000;
    return `  <testsuite name="${xml(`${run.suite} (${variant.label})`)}" tests="${results.length}" failures="${variant.failed}" errors="${variant.errors}" time="${seconds.toFixed(3)}">\n${cases.join('\n')}\n  </testsuite>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="${xml(run.suite)}">\n${suites.join('\n')}\n</testsuites>\n`;
}

function printRun(ctx: Ctx, run: EvalRunView): void {
  const { out } = ctx;
  out.line(`${out.bold(run.suite)} on ${run.agentName}: ${out.state(run.status)} (${run.id})`);
  if (run.error) out.line(`error: ${run.error.code}: ${run.error.message}`);
  out.table(
    ['VARIANT', 'PASS', 'PASSED', 'FAILED', 'ERRORS', 'COST', 'MODEL CALLS', 'TOOL CALLS', 'MEDIAN', 'FLAKY'],
    run.variants.map((v) => [
      v.label,
      percent(v.passRate),
      String(v.passed),
      String(v.failed),
      String(v.errors),
      money(v.cost),
      String(v.modelCalls),
      String(v.toolCalls),
      v.medianMs === null ? '-' : `${Math.round(v.medianMs)} ms`,
      v.flaky.join(', ') || '-',
    ]),
  );
  for (const result of run.results.filter((r) => r.status !== 'passed')) {
    const why = result.error
      ? `${result.error.code}: ${result.error.message}`
      : result.assertions
          .filter((a) => !a.pass)
          .map((a) => `${a.kind}: ${a.detail}`)
          .join('; ');
    out.line(
      `${out.state(result.status)} ${result.case} [${result.variant}${run.repeat > 1 ? ` #${result.repeat + 1}` : ''}]: ${why}`,
    );
  }
}

function writeOutputs(run: EvalRunView, options: { junit?: string; output?: string }): void {
  if (options.junit) writeFileSync(options.junit, junit(run));
  if (options.output) writeFileSync(options.output, `${JSON.stringify(run, null, 2)}\n`);
}

/** Exit 1 unless every case of the run passed. */
function verdict(run: EvalRunView): void {
  if (run.status !== 'passed')
    throw new CliError(`eval run ${run.id} ${run.status}`, EXIT.failed, { code: `eval_${run.status}` });
}

export async function runSuite(
  ctx: Ctx,
  suitePath: string,
  options: {
    agent: string;
    model?: string[];
    instructionsFile?: string;
    repeat?: string;
    liveTools?: boolean;
    concurrency?: string;
    junit?: string;
    output?: string;
  },
): Promise<void> {
  const suite = readJson(suitePath);
  const models = options.model ?? [];
  const instructions = options.instructionsFile ? readFileSync(options.instructionsFile, 'utf8') : undefined;
  const variants = [
    ...models.map((model) => ({ model })),
    ...(instructions !== undefined ? [{ label: 'instructions', instructions }] : []),
  ];
  // A path names an agent file (the daemon copies it); anything else names a loaded agent.
  const agent = /\.agt$/.test(options.agent) && !isAbsolute(options.agent) ? resolve(options.agent) : options.agent;
  const body = {
    suite,
    agent,
    ...(variants.length ? { variants } : {}),
    ...(options.repeat ? { repeat: Number(options.repeat) } : {}),
    ...(options.liveTools ? { liveTools: true } : {}),
    ...(options.concurrency ? { concurrency: Number(options.concurrency) } : {}),
  };
  let run = await ctx.client.post<EvalRunView>('/evals/runs', body);
  const cancel = () => {
    void ctx.client.post(`/evals/runs/${seg(run.id)}/cancel`).catch(() => undefined);
  };
  process.once('SIGINT', cancel);
  try {
    let shown = 0;
    while (run.status === 'running') {
      await new Promise((done) => setTimeout(done, POLL_MS));
      run = await ctx.client.get<EvalRunView>(`/evals/runs/${seg(run.id)}`);
      if (!ctx.out.json)
        for (const result of run.results.slice(shown))
          process.stderr.write(`${result.status} ${result.case} [${result.variant}] (${result.ms} ms)\n`);
      shown = run.results.length;
    }
  } finally {
    process.removeListener('SIGINT', cancel);
  }
  writeOutputs(run, options);
  ctx.out.result(run, () => printRun(ctx, run));
  verdict(run);
}

export async function show(ctx: Ctx, runId: string, options: { junit?: string; output?: string }): Promise<void> {
  const run = await ctx.client.get<EvalRunView>(`/evals/runs/${seg(runId)}`);
  writeOutputs(run, options);
  ctx.out.result(run, () => printRun(ctx, run));
}

export async function list(ctx: Ctx): Promise<void> {
  const { runs } = await ctx.client.get<{ runs: Array<Omit<EvalRunView, 'results'>> }>('/evals/runs');
  ctx.out.result({ runs }, () => {
    if (runs.length === 0) return ctx.out.line(ctx.out.dim('no eval runs'));
    ctx.out.table(
      ['RUN', 'SUITE', 'AGENT', 'STATUS', 'PASS', 'STARTED'],
      runs.map((run) => [
        run.id,
        run.suite,
        run.agentName,
        run.status,
        run.variants.map((v) => `${v.label} ${percent(v.passRate)}`).join(', '),
        run.createdAt.slice(0, 19).replace('T', ' '),
      ]),
    );
  });
}

export async function cancel(ctx: Ctx, runId: string): Promise<void> {
  const run = await ctx.client.post<EvalRunView>(`/evals/runs/${seg(runId)}/cancel`);
  ctx.out.result(run, () => ctx.out.line(`${run.id}: ${run.status}`));
}

/** The answers of two runs side by side, case by case (first repeat of the first variant of each). */
export async function diff(ctx: Ctx, a: string, b: string): Promise<void> {
  const [left, right] = await Promise.all([a, b].map((id) => ctx.client.get<EvalRunView>(`/evals/runs/${seg(id)}`)));
  const first = (run: EvalRunView) => {
    const label = run.variants[0]?.label;
    return new Map(run.results.filter((r) => r.variant === label && r.repeat === 0).map((r) => [r.case, r] as const));
  };
  const l = first(left!);
  const r = first(right!);
  const names = [...new Set([...l.keys(), ...r.keys()])];
  const rows = names.map((name) => ({
    case: name,
    left: l.get(name) ?? null,
    right: r.get(name) ?? null,
    same: (l.get(name)?.answer ?? null) === (r.get(name)?.answer ?? null),
  }));
  ctx.out.result({ left: left!.id, right: right!.id, cases: rows }, () => {
    for (const row of rows) {
      ctx.out.line(
        `${ctx.out.bold(row.case)}: ${row.left?.status ?? '-'} → ${row.right?.status ?? '-'}${row.same ? ' (same answer)' : ''}`,
      );
      if (row.same) continue;
      ctx.out.line(`  - ${row.left?.answer ?? '(none)'}`);
      ctx.out.line(`  + ${row.right?.answer ?? '(none)'}`);
    }
  });
}
