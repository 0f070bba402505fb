/**
 * Run control of the Agents group: `POST /agents/{id}/interrupt`, `/abort` and `/state` (docs/runtime.md#control).
 * `?loop=` wins over the body's `loop`; absent means `main`.
 */
import { Type } from 'typebox';
import { DisplayState, LOOP_NAME_PATTERN } from '../agents/config-schema.js';
import { AgentIdParams, errorResponses } from '@agt/contracts';
import type { KernelRoutes } from './plugin.js';

const TAGS = ['Agents'];
const LoopName = Type.String({ pattern: LOOP_NAME_PATTERN });
const LoopQuery = Type.Object({ loop: Type.Optional(LoopName) });
const LoopBody = Type.Object(
  { loop: Type.Optional(LoopName) },
  { description: 'optional: a bodiless POST (no Content-Type) is fine' },
);
/** Bodiless POSTs arrive with no body at all; validate them as `{}`. */
export const bodyOptional = async (request: { body: unknown }) => {
  request.body ??= {};
};

export const controlRoutes: KernelRoutes<'runtime'> = async (app, { services }) => {
  const service = services.runtime;

  app.post(
    '/interrupt',
    {
      preValidation: bodyOptional,
      schema: {
        tags: TAGS,
        summary: "Interrupt a loop's running turn; queued chats are kept and run next",
        description:
          '`interrupted` is false when nothing was running. 409 when the loop is stopped (aborted) or in error.',
        params: AgentIdParams,
        querystring: LoopQuery,
        body: LoopBody,
        response: {
          200: Type.Object({ success: Type.Literal(true), interrupted: Type.Boolean(), loop: Type.String() }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const runtime = service.forRequest(request.params.id);
      const loop = request.query.loop ?? request.body.loop ?? 'main';
      return { success: true as const, interrupted: runtime.interrupt(loop), loop };
    },
  );

  app.post(
    '/abort',
    {
      preValidation: bodyOptional,
      schema: {
        tags: TAGS,
        summary: 'Abort a loop: it stops (no further turns, triggers or timers) until the agent is reloaded',
        description:
          'The running turn ends in `agent.error` (`aborted`); queued chats are discarded with `chat.discarded` naming their turn ids, and a system notice is written to the loop. 409 when the loop has no running executor.',
        params: AgentIdParams,
        querystring: LoopQuery,
        body: LoopBody,
        response: {
          200: Type.Object({ success: Type.Literal(true), loop: Type.Optional(Type.String()) }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const runtime = service.forRequest(request.params.id);
      const named = request.query.loop ?? request.body.loop;
      runtime.abort(named ?? 'main');
      return { success: true as const, ...(named !== undefined ? { loop: named } : {}) };
    },
  );

  app.post(
    '/state',
    {
      schema: {
        tags: TAGS,
        summary: 'Set the display state (not persisted to the file)',
        description:
          '`active`/`idle`: triggers fire. `hibernate`: only inbox and chat triggers fire. `suspended`: trigger events are held and replayed on resume. `off`: no trigger fires, queued work is discarded (`chat.discarded`) and running turns are interrupted. Chats sent directly still run in every state.',
        params: AgentIdParams,
        body: Type.Object({ state: DisplayState }),
        response: {
          200: Type.Object({ agentId: Type.String(), success: Type.Literal(true), state: DisplayState }),
          ...errorResponses(404),
        },
      },
    },
    async (request) => {
      const runtime = service.forRequest(request.params.id);
      runtime.setDisplayState(request.body.state);
      return { agentId: runtime.id, success: true as const, state: request.body.state };
    },
  );
};
