/**
 * Eval routes (docs/evals.md): capture cases from an agent's history, start a run of a suite on
 * throwaway copies of an agent, read and cancel runs. Runs are kept in the daemon's data folder, not in
 * the agent's file.
 */
import { Type } from 'typebox';
import { errorResponses } from '@agt/contracts';
import { MAX_CONCURRENCY } from '../evals/service.js';
import { Suite } from '../evals/suite.js';
import type { KernelRoutes } from './plugin.js';

const TAGS = ['Evals'];

const Variant = Type.Object(
  {
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 80 })),
    model: Type.Optional(Type.String({ minLength: 3, maxLength: 300, description: '`provider/model`' })),
    instructions: Type.Optional(Type.String({ maxLength: 200_000 })),
  },
  { additionalProperties: false },
);

const AssertionResult = Type.Object({
  kind: Type.String(),
  pass: Type.Boolean(),
  detail: Type.String(),
  score: Type.Optional(Type.Number()),
});
const ErrorInfo = Type.Object({ code: Type.String(), message: Type.String() });
const CaseResult = Type.Object({
  case: Type.String(),
  variant: Type.String(),
  repeat: Type.Integer(),
  status: Type.Union([Type.Literal('passed'), Type.Literal('failed'), Type.Literal('error')]),
  answer: Type.Union([Type.String(), Type.Null()]),
  modelCalls: Type.Integer(),
  toolCalls: Type.Array(Type.Object({ name: Type.String(), args: Type.Unknown() })),
  cost: Type.Union([Type.Number(), Type.Null()], { description: 'USD; null when a price is not known' }),
  ms: Type.Number(),
  assertions: Type.Array(AssertionResult),
  error: Type.Optional(ErrorInfo),
});
const VariantSummary = Type.Object({
  label: Type.String(),
  model: Type.Union([Type.String(), Type.Null()]),
  instructions: Type.Boolean({ description: 'the variant replaces the instructions' }),
  cases: Type.Integer({ description: 'case runs ended so far (cases × repeats when done)' }),
  passed: Type.Integer(),
  failed: Type.Integer(),
  errors: Type.Integer(),
  passRate: Type.Number(),
  cost: Type.Union([Type.Number(), Type.Null()]),
  modelCalls: Type.Integer(),
  toolCalls: Type.Integer(),
  medianMs: Type.Union([Type.Number(), Type.Null()]),
  flaky: Type.Array(Type.String(), { description: 'cases that passed and failed over the repeats' }),
});
const RunStatus = Type.Union([
  Type.Literal('running'),
  Type.Literal('passed'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
  Type.Literal('interrupted'),
  Type.Literal('error'),
]);
const RunSummaryFields = {
  id: Type.String(),
  suite: Type.String(),
  agentId: Type.String(),
  agentName: Type.String(),
  status: RunStatus,
  createdAt: Type.String({ format: 'date-time' }),
  finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  repeat: Type.Integer(),
  liveTools: Type.Boolean(),
  total: Type.Integer({ description: 'case runs the run has in all' }),
  variants: Type.Array(VariantSummary),
  error: Type.Optional(ErrorInfo),
};
/** One run with every case result (exported for the clients' view check, test/http-api-views.ts). */
export const EvalRun = Type.Object({ ...RunSummaryFields, results: Type.Array(CaseResult) });
export const EvalRunList = Type.Object({ runs: Type.Array(Type.Object(RunSummaryFields)) });
const RunIdParams = Type.Object({ runId: Type.String({ minLength: 1, maxLength: 100 }) });

export const evalRoutes: KernelRoutes<'evals'> = async (app, { services }) => {
  const evals = services.evals;

  app.post(
    '/capture',
    {
      schema: {
        tags: TAGS,
        summary: "Eval cases from an agent's newest turns (a suite to save, edit and run)",
        body: Type.Object(
          {
            agent: Type.String({ minLength: 1, description: 'id, handle or name of a loaded agent' }),
            turns: Type.Optional(
              Type.Integer({ minimum: 1, maximum: 1000, description: 'the newest N turns (default 1)' }),
            ),
            since: Type.Optional(Type.String({ format: 'date-time', description: 'only turns begun since then' })),
            loop: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Suite, ...errorResponses(400, 404, 409) },
      },
    },
    async (request) => {
      const { agent, turns, since, loop } = request.body;
      return evals.capture(agent, {
        ...(turns !== undefined ? { turns } : {}),
        ...(since !== undefined ? { since: Date.parse(since) } : {}),
        ...(loop !== undefined ? { loop } : {}),
      });
    },
  );

  app.post(
    '/runs',
    {
      schema: {
        tags: TAGS,
        summary: 'Run a suite on throwaway copies of an agent: 202 with the run (progress as eval.* events)',
        description:
          "Each case runs on a copy of the agent (never the live agent or its file), with its tools answered from the case's recording unless `liveTools` is true (then its real tools run in their usual sandboxes, under the usual approvals). `variants` run every case side by side (another model `provider/model`, other instructions). The run's record is in `GET /evals/runs/{runId}` while it runs and after.",
        body: Type.Object(
          {
            suite: Suite,
            agent: Type.String({ minLength: 1, description: 'id, handle or name of a loaded agent' }),
            variants: Type.Optional(Type.Array(Variant, { minItems: 1, maxItems: 4 })),
            repeat: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
            liveTools: Type.Optional(Type.Boolean()),
            concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CONCURRENCY })),
            caseTimeoutS: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })),
          },
          { additionalProperties: false },
        ),
        response: { 202: EvalRun, ...errorResponses(400, 404, 409) },
      },
    },
    async (request, reply) => reply.status(202).send(evals.start(request.body)),
  );

  app.get(
    '/runs',
    {
      schema: {
        tags: TAGS,
        summary: 'Eval runs kept (newest first; without their case results)',
        response: { 200: EvalRunList },
      },
    },
    async () => ({ runs: evals.list().map(({ results: _results, ...summary }) => summary) }),
  );

  app.get(
    '/runs/:runId',
    {
      schema: {
        tags: TAGS,
        summary: 'One eval run with every case result',
        params: RunIdParams,
        response: { 200: EvalRun, ...errorResponses(404) },
      },
    },
    async (request) => evals.get(request.params.runId),
  );

  app.post(
    '/runs/:runId/cancel',
    {
      schema: {
        tags: TAGS,
        summary: 'Cancel a running eval run; answers once it ended (status cancelled)',
        params: RunIdParams,
        response: { 200: EvalRun, ...errorResponses(404, 409) },
      },
    },
    async (request) => evals.cancel(request.params.runId),
  );
};
