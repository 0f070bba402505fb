/**
 * Assertions of eval cases (docs/evals.md, "Assertions"): each gives pass or fail with a line that says
 * why. The judge calls a model the owner names (through the spend governor, so its cost counts); a lambda
 * scorer runs in the QuickJS sandbox of agent lambdas.
 */
import { Value } from 'typebox/value';
import type { ModelClient } from '@agt/contracts';
import type { LambdaHost } from '../runtime/sandbox/lambda-runner.js';
import type { Assertion, EvalCase } from './suite.js';

/** What one run of a case did, as the assertions see it. */
export interface CaseOutcome {
  answer: string | null;
  modelCalls: number;
  toolCalls: Array<{ name: string; args: unknown }>;
  /** USD; null when a price was unknown. */
  cost: number | null;
}

export interface AssertionResult {
  kind: string;
  pass: boolean;
  detail: string;
  score?: number;
  /** USD the assertion itself spent (the judge). */
  cost?: number;
}

export interface ScoreDeps {
  /** A model client for the judge, counted by the spend governor; undefined when no provider serves it. */
  judgeClient(provider: string): Promise<ModelClient | undefined>;
  lambdas: LambdaHost;
  signal: AbortSignal;
}

const words = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);

/** Jaccard similarity of the two texts' word sets (1 for two empty texts). */
export function similarity(a: string, b: string): number {
  const left = words(a);
  const right = words(b);
  if (left.size === 0 && right.size === 0) return 1;
  let shared = 0;
  for (const word of left) if (right.has(word)) shared++;
  return shared / (left.size + right.size - shared);
}

const JUDGE_SYSTEM =
  'You grade an AI agent’s answer against a rubric. Reply with one line of JSON only: {"score": <0..1>, "reason": "<one sentence>"}.';

async function judge(
  spec: Extract<Assertion, { judge: unknown }>['judge'],
  testCase: EvalCase,
  answer: string,
  deps: ScoreDeps,
): Promise<AssertionResult> {
  const client = await deps.judgeClient(spec.provider);
  if (!client) return { kind: 'judge', pass: false, detail: `no provider serves ${spec.provider}` };
  const response = await client.complete({
    agentId: 'eval-judge',
    model: { provider: spec.provider, model_id: spec.model, temperature: 0 } as never,
    system: JUDGE_SYSTEM,
    messages: [
      {
        role: 'user',
        content: `Rubric:\n${spec.rubric}\n\nThe agent was asked:\n${testCase.input}\n\nIts answer:\n${answer}`,
      },
    ],
    tools: [],
    signal: deps.signal,
    purpose: 'eval_judge',
  });
  const cost = response.cost ?? undefined;
  const json = /\{[\s\S]*\}/.exec(response.text)?.[0];
  let verdict: { score?: unknown; reason?: unknown } = {};
  try {
    verdict = json ? (JSON.parse(json) as typeof verdict) : {};
  } catch {
    // An unreadable verdict fails the assertion below with the judge's own words.
  }
  const score = typeof verdict.score === 'number' ? Math.min(1, Math.max(0, verdict.score)) : Number.NaN;
  if (Number.isNaN(score))
    return { kind: 'judge', pass: false, detail: `the judge gave no score: ${response.text.slice(0, 200)}`, cost };
  const pass = score >= (spec.pass ?? 0.5);
  const reason = typeof verdict.reason === 'string' ? verdict.reason : '';
  return { kind: 'judge', pass, score, detail: `judge ${spec.model}: ${score} ${reason}`.trim(), cost };
}

async function lambda(
  spec: Extract<Assertion, { lambda: unknown }>['lambda'],
  testCase: EvalCase,
  outcome: CaseOutcome,
  deps: ScoreDeps,
): Promise<AssertionResult> {
  const fn = spec.fn ?? 'score';
  try {
    const { result } = await deps.lambdas.run({
      ref: { path: 'scorer.ts', fn },
      source: spec.source,
      event: { input: testCase.input, recorded: testCase.recorded ?? null, ...outcome },
    });
    if (typeof result === 'boolean') return { kind: 'lambda', pass: result, detail: `${fn} returned ${result}` };
    const verdict = (result ?? {}) as { pass?: unknown; score?: unknown; reason?: unknown };
    return {
      kind: 'lambda',
      pass: verdict.pass === true,
      detail: typeof verdict.reason === 'string' ? verdict.reason : `${fn} returned ${JSON.stringify(result)}`,
      ...(typeof verdict.score === 'number' ? { score: verdict.score } : {}),
    };
  } catch (error) {
    return { kind: 'lambda', pass: false, detail: `the scorer failed: ${(error as Error).message}` };
  }
}

function toolAssertion(spec: Extract<Assertion, { tool: string }>, outcome: CaseOutcome): AssertionResult {
  const calls = outcome.toolCalls.filter((call) => call.name === spec.tool);
  if (spec.called === false) {
    const pass = calls.length === 0;
    return { kind: 'tool', pass, detail: `${spec.tool} ${pass ? 'not called' : `called ${calls.length} time(s)`}` };
  }
  const matching = spec.args ? calls.filter((call) => Value.Check(spec.args as never, call.args)) : calls;
  const min = spec.min ?? 1;
  const pass = matching.length >= min && (spec.max === undefined || matching.length <= spec.max);
  const what = spec.args ? ' with matching arguments' : '';
  return { kind: 'tool', pass, detail: `${spec.tool} called ${matching.length} time(s)${what} (of ${calls.length})` };
}

/** Checks one assertion against what a run of the case did. */
export async function score(
  assertion: Assertion,
  testCase: EvalCase,
  outcome: CaseOutcome,
  deps: ScoreDeps,
): Promise<AssertionResult> {
  const answer = outcome.answer ?? '';
  if ('contains' in assertion) {
    const pass = assertion.ignoreCase
      ? answer.toLowerCase().includes(assertion.contains.toLowerCase())
      : answer.includes(assertion.contains);
    return {
      kind: 'contains',
      pass,
      detail: `${pass ? 'contains' : 'does not contain'} ${JSON.stringify(assertion.contains)}`,
    };
  }
  if ('notContains' in assertion) {
    const found = assertion.ignoreCase
      ? answer.toLowerCase().includes(assertion.notContains.toLowerCase())
      : answer.includes(assertion.notContains);
    return {
      kind: 'notContains',
      pass: !found,
      detail: `${found ? 'contains' : 'does not contain'} ${JSON.stringify(assertion.notContains)}`,
    };
  }
  if ('matches' in assertion) {
    let pattern: RegExp;
    try {
      pattern = new RegExp(assertion.matches, assertion.flags);
    } catch (error) {
      return { kind: 'matches', pass: false, detail: `not a regular expression: ${(error as Error).message}` };
    }
    const pass = pattern.test(answer);
    return { kind: 'matches', pass, detail: `${pass ? 'matches' : 'does not match'} /${assertion.matches}/` };
  }
  if ('tool' in assertion) return toolAssertion(assertion, outcome);
  if ('maxModelCalls' in assertion) {
    const pass = outcome.modelCalls <= assertion.maxModelCalls;
    return {
      kind: 'maxModelCalls',
      pass,
      detail: `${outcome.modelCalls} model call(s), at most ${assertion.maxModelCalls}`,
    };
  }
  if ('maxToolCalls' in assertion) {
    const n = outcome.toolCalls.length;
    return {
      kind: 'maxToolCalls',
      pass: n <= assertion.maxToolCalls,
      detail: `${n} tool call(s), at most ${assertion.maxToolCalls}`,
    };
  }
  if ('maxCost' in assertion) {
    if (outcome.cost === null)
      return { kind: 'maxCost', pass: false, detail: 'the cost is not known (a model without a price)' };
    const pass = outcome.cost <= assertion.maxCost;
    return { kind: 'maxCost', pass, detail: `cost $${outcome.cost.toFixed(6)}, at most $${assertion.maxCost}` };
  }
  if ('similar' in assertion) {
    const to = assertion.similar.to ?? testCase.recorded?.answer ?? null;
    if (to === null) return { kind: 'similar', pass: false, detail: 'no recorded answer to compare with' };
    const value = similarity(answer, to);
    const pass = value >= assertion.similar.min;
    return {
      kind: 'similar',
      pass,
      score: value,
      detail: `similarity ${value.toFixed(2)}, at least ${assertion.similar.min}`,
    };
  }
  if ('judge' in assertion) {
    try {
      return await judge(assertion.judge, testCase, answer, deps);
    } catch (error) {
      return { kind: 'judge', pass: false, detail: `the judge failed: ${(error as Error).message}` };
    }
  }
  return lambda(assertion.lambda, testCase, outcome, deps);
}
