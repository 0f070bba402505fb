/**
 * The Timers route group: `GET/POST /agents/{id}/timers`, `PUT/DELETE /agents/{id}/timers/{timerId}`.
 * A firing timer is an `on_timer` event that goes exactly to the timer's own `scope` (agent: one wake
 * of its loop; system: one run of its lambda), never also to the configured `on_timer` targets.
 * Expired timers stay in the list as history.
 */
import { Type } from 'typebox';
import { AgentIdParams, AgentSuccess, errorResponses } from '@agt/contracts';
import type { TimerRow } from '../agents/stores/timers-store.js';
import { TimerMutationBody, type StoredSchedule } from '../runtime/timers/schedule.js';
import type { AgentRuntime } from '../runtime/agent-runtime.js';
import type { KernelRoutes } from './plugin.js';
import { noSuchLoop } from '../runtime/errors.js';

const TAGS = ['Timers'];
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const Timer = Type.Object({
  id: Type.Integer(),
  mode: Type.String(),
  schedule: Type.Object(
    {
      mode: Type.String(),
      at: Type.Optional(Type.Integer()),
      delay_ms: Type.Optional(Type.Integer()),
      every_ms: Type.Optional(Type.Integer()),
      start_at: Type.Optional(Type.Integer()),
      end_at: Type.Optional(Type.Integer()),
      max_runs: Type.Optional(Type.Integer()),
      cron: Type.Optional(Type.String()),
    },
    {
      description:
        'interval `{mode, every_ms, start_at, end_at, max_runs}`; cron `{mode, cron, end_at, max_runs}`; once `{mode, at}`',
    },
  ),
  next_wake_at: Nullable(Type.Integer()),
  payload: Nullable(Type.String()),
  scope: Type.Array(Type.String()),
  lambda: Nullable(Type.String()),
  warm: Type.Boolean(),
  run_count: Type.Integer(),
  created_at: Type.Integer(),
  last_fired_at: Nullable(Type.Integer()),
  locked: Type.Boolean(),
  loop: Nullable(
    Type.String({ description: 'the loop an agent-scope wake goes to; null = main (or a system-only timer)' }),
  ),
  expired: Type.Boolean(),
});

const TimerParams = Type.Object({ id: Type.String({ minLength: 1 }), timerId: Type.Integer() });

/** The stored row as the API shows it (the schedule was written by schedule.ts, so it has its shape). */
export const timerView = (row: TimerRow) => ({ ...row, schedule: row.schedule as unknown as StoredSchedule });

function checkLoop(runtime: AgentRuntime, loop: string | undefined): void {
  if (loop !== undefined && !runtime.loopNames().includes(loop)) throw noSuchLoop(runtime.agent.name, loop);
}

export const timerRoutes: KernelRoutes<'runtime'> = async (app, { services }) => {
  const service = services.runtime;

  app.get(
    '/timers',
    {
      schema: {
        tags: TAGS,
        summary: "The agent's timers, expired ones kept as history",
        params: AgentIdParams,
        response: { 200: Type.Object({ agentId: Type.String(), timers: Type.Array(Timer) }), ...errorResponses(404) },
      },
    },
    async (request) => {
      const runtime = service.forRequest(request.params.id);
      return { agentId: runtime.id, timers: runtime.timers.list().map(timerView) };
    },
  );

  app.post(
    '/timers',
    {
      schema: {
        tags: TAGS,
        summary: 'Create a timer (modes once_at, once_delay, interval, cron)',
        description:
          '`loop` names the loop an agent-scope wake goes to (absent = main; unknown = 404). A system-scope timer needs a `lambda`; a system-only timer carries no loop.',
        params: AgentIdParams,
        body: TimerMutationBody,
        response: {
          200: Type.Object({ agentId: Type.String(), success: Type.Literal(true), timer: Timer }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const runtime = service.forRequest(request.params.id);
      checkLoop(runtime, request.body.loop);
      const timer = runtime.timers.create(request.body);
      return { agentId: runtime.id, success: true as const, timer: timerView(timer) };
    },
  );

  app.put(
    '/timers/:timerId',
    {
      schema: {
        tags: TAGS,
        summary: 'Replace a timer in place (same id); `success` false when there is no such timer',
        description:
          'With `loop` the timer moves to that loop (`main` moves it back); without `loop` it keeps its loop. The run count starts over.',
        params: TimerParams,
        body: TimerMutationBody,
        response: { 200: AgentSuccess, ...errorResponses(404) },
      },
    },
    async (request) => {
      const runtime = service.forRequest(request.params.id);
      checkLoop(runtime, request.body.loop);
      return { agentId: runtime.id, success: runtime.timers.replace(request.params.timerId, request.body) };
    },
  );

  app.delete(
    '/timers/:timerId',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete a timer; `success` false when there is no such timer',
        params: TimerParams,
        response: { 200: AgentSuccess, ...errorResponses(404) },
      },
    },
    async (request) => {
      const runtime = service.forRequest(request.params.id);
      return { agentId: runtime.id, success: runtime.timers.delete(request.params.timerId) };
    },
  );
};
