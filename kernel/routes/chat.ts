/**
 * The Chat route group: `POST/GET/DELETE /agents/{id}/chat` (docs/runtime.md#chat-and-queueing) and
 * `POST /agents/{id}/trigger` (dispatch). Both POSTs answer 202 at once with the `turnId` the turn's
 * events will carry, and honour `Idempotency-Key`.
 */
import { Type } from 'typebox';
import { AgentIdParams, errorResponses } from '@agt/contracts';
import { LOOP_NAME_PATTERN } from '../agents/config-schema.js';
import { historyMessage } from '../runtime/executor/context.js';
import { normalizeDispatch } from '../runtime/dispatch.js';
import { IDEMPOTENCY_KEY_MAX_LENGTH, requestDigest } from '../agents/stores/idempotency-store.js';
import type { KernelRoutes } from './plugin.js';
import { loopDisabled, noSuchLoop } from '../runtime/errors.js';
import { MAX_CHAT_WAIT_S, waitSeconds, watchTurns } from './chat-wait.js';
import { awaitReplica } from '../extensions/kernel-points.js';

const TAGS = ['Chat'];
const LoopName = Type.String({ pattern: LOOP_NAME_PATTERN, description: 'cognition loop; absent = main' });
export const LoopQuery = Type.Object({ loop: Type.Optional(LoopName) });
const Accepted202 = Type.Object({ accepted: Type.Literal(true), turnId: Type.String() });
const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
      description:
        'A repeat with the same key and the same request (per agent, one namespace for chat and trigger, kept 24 h, at most 10,000 per agent: the oldest go first) answers the same 202 and turnId and queues nothing; the same key with another request (another body, loop or route) answers 422 `idempotency_key_reused` and queues nothing. Keys are kept in the agent file: a repeat after a daemon restart still answers the first turnId.',
    }),
  ),
});
const WaitedReply = Type.Object(
  {
    accepted: Type.Literal(true),
    turnId: Type.String(),
    status: Type.Union([Type.Literal('completed'), Type.Literal('error'), Type.Literal('discarded')]),
    text: Type.Union([Type.String(), Type.Null()], { description: "the turn's reply" }),
    stopReason: Type.Union([Type.String(), Type.Null()]),
    llmCalls: Type.Integer(),
    toolCalls: Type.Integer(),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()], {
      description: "agent.error's code and message, or why the chat was discarded",
    }),
  },
  { description: 'the end of the turn (a waiting chat whose turn ended in time)' },
);
const HistoryMessage = Type.Object(
  {
    id: Type.Integer(),
    role: Type.String(),
    kind: Type.String(),
    content: Type.String(),
    turnId: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.Integer(),
  },
  {
    additionalProperties: true,
    description: 'one agt_loop row as a model message (`toolCalls`, `toolCallId`, `name`, `isError` when they apply)',
  },
);
const ChatHistory = Type.Union([
  Type.Object({ llmMessages: Type.Array(HistoryMessage), total: Type.Integer(), earlierCount: Type.Integer() }),
  Type.Null(),
]);

export const DEFAULT_HISTORY_LIMIT = 200;
export const MAX_HISTORY_LIMIT = 500;
const clamp = (value: number | undefined, fallback: number, max: number) =>
  Math.min(max, Math.max(1, value ?? fallback));

export const chatRoutes: KernelRoutes<'bus' | 'runtime' | 'contributions'> = async (app, { services }) => {
  const service = services.runtime;

  app.post(
    '/chat',
    {
      schema: {
        tags: TAGS,
        summary:
          'Send a chat message to a loop: 202 at once with the turnId (queued while the loop is busy); with ?wait=true or Prefer: wait=N, 200 with the reply once the turn ends',
        description:
          'An unknown loop answers 404 and a disabled loop 409 before anything is queued. The accepted chat is committed to the agent file before the 202: a daemon crash or restart never loses it (it runs when the agent loads again, or its end is announced). A chat sent while the loop is busy interrupts the running turn (the first such chat) and queues; the oldest queued chat runs next as its own turn and absorbs the others (`chat.delivered`). Every turnId ends in `turn.completed` or `agent.error` (`code: daemon_restart` for a turn a crash cut short), or `chat.discarded` on abort, unload or `off`. `?loop=` wins over the body `loop`.',
        params: AgentIdParams,
        querystring: Type.Object({
          loop: Type.Optional(LoopName),
          wait: Type.Optional(
            Type.Boolean({
              description: `answer once the turn ended (200 with its reply), waiting at most ${MAX_CHAT_WAIT_S} s; then 202 as usual`,
            }),
          ),
        }),
        headers: Type.Object({
          ...IdempotencyHeaders.properties,
          prefer: Type.Optional(
            Type.String({
              maxLength: 200,
              description: `\`wait=N\` (RFC 7240): as ?wait=true but at most N seconds (capped at ${MAX_CHAT_WAIT_S})`,
            }),
          ),
        }),
        body: Type.Object({ text: Type.String({ minLength: 1 }), loop: Type.Optional(LoopName) }),
        response: { 200: WaitedReply, 202: Accepted202, ...errorResponses(404, 409, 422) },
      },
    },
    async (request, reply) => {
      const runtime = service.forRequest(request.params.id);
      const loop = request.query.loop ?? request.body.loop ?? 'main';
      const seconds = waitSeconds(request.query.wait, request.headers.prefer);
      if (seconds === undefined || seconds === 0) {
        const turnId = await runtime.chatGrouped(loop, request.body.text, request.headers['idempotency-key']);
        await awaitReplica(services.contributions.points, request.log, runtime.id, turnId);
        return reply.status(202).send({ accepted: true as const, turnId });
      }
      // Listening starts before the chat is queued; a repeated Idempotency-Key may name a turn that
      // already ended, so the buffered events are looked at too.
      const watch = watchTurns(services.bus, runtime.id);
      let turnId: string;
      try {
        turnId = await runtime.chatGrouped(loop, request.body.text, request.headers['idempotency-key']);
      } catch (error) {
        watch.cancel();
        throw error;
      }
      reply.raw.once('close', () => watch.cancel());
      const earlier = request.headers['idempotency-key'] ? services.bus.framesAfter(0).map((frame) => frame.event) : [];
      const outcome = await watch.wait(turnId, seconds, earlier);
      // The turn id a client is given (202) or the end it is shown (200) is one a daemon taking the agent
      // over from its replica keeps (docs/fleet.md, Replication): the replica made after the wait holds both.
      await awaitReplica(services.contributions.points, request.log, runtime.id, turnId);
      if (!outcome) return reply.status(202).send({ accepted: true as const, turnId });
      return reply
        .status(200)
        .header('preference-applied', `wait=${seconds}`)
        .send({ accepted: true as const, turnId, ...outcome });
    },
  );

  app.get(
    '/chat',
    {
      schema: {
        tags: TAGS,
        summary: "A loop's chat history (newest `limit` rows), or null when the loop has none",
        params: AgentIdParams,
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ description: 'default 200, clamped to 1-500' })),
          loop: Type.Optional(LoopName),
        }),
        response: { 200: ChatHistory, ...errorResponses(404) },
      },
    },
    async (request) => {
      const runtime = service.forRequest(request.params.id);
      const loop = request.query.loop ?? 'main';
      if (!runtime.loopNames().includes(loop)) throw noSuchLoop(runtime.agent.name, loop);
      const total = runtime.agent.file.loop.count(loop);
      if (total === 0) return null;
      const rows = runtime.agent.file.loop.tail(
        loop,
        clamp(request.query.limit, DEFAULT_HISTORY_LIMIT, MAX_HISTORY_LIMIT),
      );
      return { llmMessages: rows.map(historyMessage), total, earlierCount: total - rows.length };
    },
  );

  app.delete(
    '/chat',
    {
      schema: {
        tags: TAGS,
        summary: "Clear one loop's stream (default main, never all) and reset its session; 409 while a turn runs",
        params: AgentIdParams,
        querystring: LoopQuery,
        response: {
          200: Type.Object({
            agentId: Type.String(),
            success: Type.Boolean(),
            loop: Type.String(),
            removed: Type.Integer(),
          }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const runtime = service.forRequest(request.params.id);
      const loop = request.query.loop ?? 'main';
      const removed = runtime.clearLoop(loop);
      return { agentId: runtime.id, success: true, loop, removed };
    },
  );

  app.post(
    '/trigger',
    {
      schema: {
        tags: TAGS,
        summary: 'Dispatch a trigger event (bypasses the trigger evaluator): 202 with the turnId',
        description:
          'Body forms: (a) `{event, target?}`; (b) `{dispatch: <a or d>}`; (c) a bare event with the target fields (`scope`, `lambda`, `command`, `warm`, `loop`) at the top level or under `target`; (d) a batch `{events, target?, count?}`. Event: `{id?, type, source?, time?, data, correlationId?}`; `data` is required (null allowed) except for `startup`; `time` is an ISO 8601 date-time. Refused with 400: `data.message.source: "user"` (use chat), the internal flags `skip_loop_append` / `pre_appended_loop` anywhere, a missing or unknown `type`, a body nested deeper than 64 levels. `?loop=` wins over the target\'s `loop`; an unknown loop is 404 and a disabled one 409, before anything is queued. An inbox dispatch creates no `agt_inbox` row.',
        params: AgentIdParams,
        querystring: LoopQuery,
        headers: IdempotencyHeaders,
        body: Type.Object(
          {},
          { additionalProperties: true, description: 'dispatch, wrapped dispatch, bare event or batch' },
        ),
        response: { 202: Accepted202, ...errorResponses(404, 409, 422) },
      },
    },
    async (request, reply) => {
      const runtime = service.forRequest(request.params.id);
      const loop = request.query.loop;
      const key = request.headers['idempotency-key'];
      // The request as sent, before the normalizer fills in ids and times of its own.
      const idempotency =
        key === undefined ? undefined : { key, requestHash: requestDigest('trigger', loop ?? null, request.body) };
      const dispatch = normalizeDispatch(request.body);
      if (loop !== undefined) {
        // 404 unknown, 409 disabled, before anything runs (also for a system-scope target)
        if (!runtime.loopNames().includes(loop)) throw noSuchLoop(runtime.agent.name, loop);
        if (runtime.agent.config.loops?.find((l) => l.name === loop)?.enabled === false) throw loopDisabled(loop);
        dispatch.target = { ...dispatch.target, loop };
      }
      const turnId = runtime.dispatch(dispatch, idempotency);
      // As for a chat: the turn id a client is given is one a daemon taking the agent over keeps.
      await awaitReplica(services.contributions.points, request.log, runtime.id, turnId);
      return reply.status(202).send({ accepted: true as const, turnId });
    },
  );
};
