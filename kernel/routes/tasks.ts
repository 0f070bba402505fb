/**
 * The Tasks & approvals route group (docs/runtime.md#human-in-the-loop-tasks--approvals): approval tasks of restricted
 * tool calls, `ask` requests, and suspend prompts. Every resolution emits `hil.resolved`; the waiting turn resumes.
 */
import { Type } from 'typebox';
import { AgentIdParams, errorResponses } from '@agt/contracts';
import { LOOP_NAME_PATTERN } from '../agents/config-schema.js';
import type { KernelRoutes } from './plugin.js';
import { nothingSuspended } from '../runtime/errors.js';

const TAGS = ['Tasks & approvals'];
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const Args = Type.Object({}, { additionalProperties: true });

export const TaskSchema = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('approval'), Type.Literal('budget')]),
  status: Type.Union([
    Type.Literal('pending'),
    Type.Literal('pending_approval'),
    Type.Literal('running'),
    Type.Literal('completed'),
    Type.Literal('failed'),
    Type.Literal('denied'),
    Type.Literal('cancelled'),
  ]),
  tool: Type.String(),
  args: Args,
  loop: Type.String(),
  turnId: Nullable(Type.String()),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
  resolution: Nullable(
    Type.Object({
      action: Type.Union([Type.Literal('approve'), Type.Literal('deny')]),
      reason: Type.Optional(Type.String()),
      modifiedArgs: Type.Optional(Args),
    }),
  ),
  result: Nullable(Type.String()),
  error: Nullable(Type.String()),
});

const AskSchema = Type.Object({
  requestId: Type.String(),
  question: Type.String(),
  schema: Type.Optional(Type.Object({}, { additionalProperties: true })),
  loop: Type.String(),
  turnId: Nullable(Type.String()),
  createdAt: Type.Integer(),
});
const TaskParams = Type.Object({ id: Type.String({ minLength: 1 }), taskId: Type.String({ minLength: 1 }) });
const AskParams = Type.Object({ id: Type.String({ minLength: 1 }), requestId: Type.String({ minLength: 1 }) });

export const taskRoutes: KernelRoutes<'runtime'> = async (app, { services }) => {
  const service = services.runtime;

  app.get(
    '/tasks',
    {
      schema: {
        tags: TAGS,
        summary: "The agent's tasks (oldest first), optionally of one status",
        description:
          'Tasks are kept in the agent file (every open task and the newest 500 finished ones): a pending approval survives a restart and its turn resumes when the agent loads again. Statuses: pending, pending_approval, running, completed, failed, denied, cancelled.',
        params: AgentIdParams,
        querystring: Type.Object({
          status: Type.Optional(Type.String()),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
        }),
        response: {
          200: Type.Object({ agentId: Type.String(), tasks: Type.Array(TaskSchema) }),
          ...errorResponses(404),
        },
      },
    },
    async (request) => {
      const runtime = service.forRequest(request.params.id);
      return { agentId: runtime.id, tasks: runtime.hil.listTasks(request.query.status, request.query.limit) };
    },
  );

  app.get(
    '/tasks/:taskId',
    {
      schema: {
        tags: TAGS,
        summary: 'One task',
        params: TaskParams,
        response: { 200: TaskSchema, ...errorResponses(404) },
      },
    },
    async (request) => service.forRequest(request.params.id).hil.getTask(request.params.taskId),
  );

  app.post(
    '/tasks/:taskId/resolve',
    {
      schema: {
        tags: TAGS,
        summary: 'Approve or deny a pending approval; the waiting turn resumes with the decision',
        description:
          'approve runs the tool (with `modifiedArgs` when given); deny hands the model the refusal and `reason`. 404 unknown task; 409 a task that is no longer pending. After a restart the decision is kept until the resumed turn gets back to the call.',
        params: TaskParams,
        body: Type.Object({
          action: Type.Union([Type.Literal('approve'), Type.Literal('deny')]),
          reason: Type.Optional(Type.String({ maxLength: 4000 })),
          modifiedArgs: Type.Optional(Args),
          amount: Type.Optional(
            Type.Number({
              exclusiveMinimum: 0,
              maximum: 1e9,
              description:
                "budget tasks: raise today's limit by this much (USD or tokens, as the budget); default: what the call needs",
            }),
          ),
        }),
        response: {
          200: Type.Object({ agentId: Type.String(), success: Type.Literal(true), task: TaskSchema }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const runtime = service.forRequest(request.params.id);
      const { action, reason, modifiedArgs, amount } = request.body;
      // A budget task approved with `amount` raises today's limit by it (docs/costs.md).
      const args =
        amount !== undefined
          ? { ...runtime.hil.getTask(request.params.taskId).args, amount }
          : (modifiedArgs as Record<string, unknown> | undefined);
      const task = runtime.hil.resolveTask(request.params.taskId, action, reason, args);
      return { agentId: runtime.id, success: true as const, task };
    },
  );

  app.get(
    '/asks',
    {
      schema: {
        tags: TAGS,
        summary: 'Pending ask requests (the `ask` tool waits for an answer)',
        params: AgentIdParams,
        response: { 200: Type.Object({ agentId: Type.String(), asks: Type.Array(AskSchema) }), ...errorResponses(404) },
      },
    },
    async (request) => {
      const runtime = service.forRequest(request.params.id);
      return { agentId: runtime.id, asks: runtime.hil.listAsks() };
    },
  );

  app.post(
    '/asks/:requestId/respond',
    {
      schema: {
        tags: TAGS,
        summary: 'Answer a pending ask; the waiting turn resumes with the answer',
        params: AskParams,
        body: Type.Object({ answer: Type.String({ maxLength: 100_000 }) }),
        response: { 200: Type.Object({ agentId: Type.String(), success: Type.Literal(true) }), ...errorResponses(404) },
      },
    },
    async (request) => {
      const runtime = service.forRequest(request.params.id);
      runtime.hil.respondAsk(request.params.requestId, request.body.answer);
      return { agentId: runtime.id, success: true as const };
    },
  );

  app.post(
    '/suspend/respond',
    {
      schema: {
        tags: TAGS,
        summary: 'Answer a suspend prompt: resume the waiting loop, or keep the agent suspended',
        description:
          'With a pending suspend prompt (a loop in `suspended`, from the agent asking to suspend) the oldest one (of `loop` when given) is answered. Without one, `resume: true` moves a `suspended` display state back to `active` (held trigger events replay). 409 when nothing is suspended.',
        params: AgentIdParams,
        body: Type.Object({ resume: Type.Boolean(), loop: Type.Optional(Type.String({ pattern: LOOP_NAME_PATTERN })) }),
        response: {
          200: Type.Object({
            agentId: Type.String(),
            success: Type.Literal(true),
            resumed: Type.Boolean(),
            requestId: Nullable(Type.String()),
          }),
          ...errorResponses(409),
        },
      },
    },
    async (request) => {
      const runtime = service.forRequest(request.params.id);
      const { resume, loop } = request.body;
      const prompt = runtime.hil.respondSuspend(resume, loop);
      if (prompt) return { agentId: runtime.id, success: true as const, resumed: resume, requestId: prompt.requestId };
      if (runtime.displayState !== 'suspended') throw nothingSuspended();
      if (resume) runtime.setDisplayState('active');
      return { agentId: runtime.id, success: true as const, resumed: resume, requestId: null };
    },
  );
};
