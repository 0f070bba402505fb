/**
 * A2A's HTTP+JSON binding (v1.0) beside the JSON-RPC one, at the same URL: `POST …/a2a/message:send`,
 * `POST …/a2a/message:stream` (Server-Sent Events), `GET …/a2a/tasks/{id}`, `GET …/a2a/tasks` (ListTasks),
 * `POST …/a2a/tasks/{id}:cancel`, `POST|GET …/a2a/tasks/{id}:subscribe`, `…/a2a/tasks/{id}/pushNotificationConfigs`
 * (`POST`, `GET`, and `GET`/`DELETE` of one), `GET …/a2a/extendedAgentCard` (the owner's credential: 401 with
 * `WWW-Authenticate: Bearer` without it; extended-card.ts). Bodies
 * and answers are the protocol's JSON form (`application/json` or `application/a2a+json`), read and written
 * with the SDK's own message codecs; errors are `google.rpc.Status` bodies with the SDK's HTTP statuses. The
 * same handler serves both bindings, after the same checks (rates, visibility, the sender of a message).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AgtError, parseStrictJson } from '@agt/contracts';
import { addressRateLimited } from '../errors.js';
import { addressBucket } from '../rate-limit.js';
import type { Caller } from './handler.js';
import {
  CallerUnauthenticated,
  credentialOf,
  refuseUnauthenticated,
  UNAUTHENTICATED_MESSAGE,
} from './extended-card.js';
import { type A2ARouteDeps, checkSender, handlerDeps, sdk, stream } from './routes.js';

type Params = { handle: string; action?: string; task?: string; config?: string };
type Request = FastifyRequest<{ Params: Params; Querystring: Record<string, string | undefined> }>;

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const integer = (value: string | undefined) => (value === undefined || value === '' ? undefined : Number(value));

export function registerA2ARestRoutes(app: FastifyInstance, deps: A2ARouteDeps): void {
  /** Runs `answer` with the agent's handler after the checks every A2A request passes; errors as REST bodies. */
  async function serve(
    request: Request,
    reply: FastifyReply,
    send: boolean,
    answer: (
      handler: InstanceType<Awaited<ReturnType<typeof sdk>>['handler']['AgentA2AHandler']>,
      modules: Awaited<ReturnType<typeof sdk>>,
      body: Record<string, unknown>,
      failure: (error: unknown) => unknown,
    ) => Promise<unknown>,
  ) {
    const modules = await sdk();
    const codes = await import('@a2a-js/sdk/errors');
    const failure = (error: unknown) => {
      const status = codes.restStatusFor(error);
      reply.code(status);
      return codes.toRestErrorBody(error, status);
    };
    try {
      const address = request.raw.socket.remoteAddress ?? '?';
      const wait = deps.addressLimiter.take(address);
      if (wait > 0) throw addressRateLimited(wait);
      const agent = deps.visibleAgent(request);
      const body = record(typeof request.body === 'string' ? parseStrictJson(request.body) : request.body);
      const version = String([request.headers['a2a-version']].flat()[0] ?? '').trim();
      if (version && !/^1\.0(\.\d+)?$/.test(version))
        throw new codes.VersionNotSupportedError(`A2A version ${version.slice(0, 20)} is not supported over HTTP+JSON`);
      const owner = addressBucket(address);
      const caller: Caller = {
        owner,
        // The sender checks read the message where the JSON-RPC binding has it (`params.message`).
        did: send ? checkSender(deps, agent, { params: body }, owner) : undefined,
        admitted: send,
        credential: credentialOf(deps.auth, request.headers.authorization),
      };
      const closed = new AbortController();
      reply.raw.once('close', () => closed.abort());
      const handler = new modules.handler.AgentA2AHandler(handlerDeps(deps), agent, {
        ...caller,
        signal: closed.signal,
      });
      const result = await answer(handler, modules, body, failure);
      if (result && typeof (result as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') {
        const { StreamResponse } = await import('@a2a-js/sdk');
        const events = (async function* () {
          for await (const event of result as AsyncIterable<Parameters<typeof StreamResponse.toJSON>[0]>)
            yield StreamResponse.toJSON(event);
        })();
        return stream(reply, events, failure, closed.signal);
      }
      return reply.type('application/json').send(result);
    } catch (error) {
      // The mesh's own refusals (rates, visibility, sender checks) keep their `{error, code}` answers.
      if (error instanceof AgtError) throw error;
      if (error instanceof CallerUnauthenticated)
        return refuseUnauthenticated(reply, error.sent, {
          error: { code: 401, status: 'UNAUTHENTICATED', message: UNAUTHENTICATED_MESSAGE },
        });
      return reply.send(failure(error));
    }
  }

  app.post('/agents/:handle/a2a/:action', async (request: Request, reply) => {
    const action = request.params.action;
    if (action !== 'message:send' && action !== 'message:stream') return reply.callNotFound();
    return serve(request, reply, true, async (handler, _modules, body) => {
      const { SendMessageRequest, SendMessageResponse } = await import('@a2a-js/sdk');
      const params = SendMessageRequest.fromJSON(body);
      if (action === 'message:stream') return handler.sendMessageStream(params);
      const result = await handler.sendMessage(params);
      return SendMessageResponse.toJSON({
        payload: 'status' in result ? { $case: 'task', value: result } : { $case: 'message', value: result },
      });
    });
  });

  app.get('/agents/:handle/a2a/tasks', async (request: Request, reply) =>
    serve(request, reply, false, async (handler) => {
      const { ListTasksRequest, ListTasksResponse } = await import('@a2a-js/sdk');
      const q = request.query;
      const params = ListTasksRequest.fromJSON({
        contextId: q.contextId ?? '',
        ...(q.status ? { status: q.status } : {}),
        ...(q.pageSize ? { pageSize: integer(q.pageSize) } : {}),
        pageToken: q.pageToken ?? '',
        ...(q.historyLength ? { historyLength: integer(q.historyLength) } : {}),
        ...(q.statusTimestampAfter ? { statusTimestampAfter: q.statusTimestampAfter } : {}),
        ...(q.includeArtifacts ? { includeArtifacts: q.includeArtifacts === 'true' } : {}),
      });
      return ListTasksResponse.toJSON(await handler.listTasks(params));
    }),
  );

  app.get('/agents/:handle/a2a/tasks/:task', async (request: Request, reply) => {
    const [id, verb] = String(request.params.task).split(':');
    if (verb === 'subscribe') return subscribe(request, reply, id!);
    if (verb !== undefined) return reply.callNotFound();
    return serve(request, reply, false, async (handler) => {
      const { Task } = await import('@a2a-js/sdk');
      const task = await handler.getTask({ tenant: '', id: id!, historyLength: integer(request.query.historyLength) });
      return Task.toJSON(task);
    });
  });

  const subscribe = (request: Request, reply: FastifyReply, id: string) =>
    serve(request, reply, false, async (handler) => handler.resubscribe({ tenant: '', id }));

  app.post('/agents/:handle/a2a/tasks/:task', async (request: Request, reply) => {
    const [id, verb] = String(request.params.task).split(':');
    if (verb === 'subscribe') return subscribe(request, reply, id!);
    if (verb !== 'cancel') return reply.callNotFound();
    return serve(request, reply, false, async (handler) => {
      const { Task } = await import('@a2a-js/sdk');
      return Task.toJSON(await handler.cancelTask({ tenant: '', id: id!, metadata: undefined }));
    });
  });

  const configs = '/agents/:handle/a2a/tasks/:task/pushNotificationConfigs';
  app.post(configs, async (request: Request, reply) =>
    serve(request, reply, false, async (handler, _modules, body) => {
      const { TaskPushNotificationConfig } = await import('@a2a-js/sdk');
      const given = TaskPushNotificationConfig.fromJSON(body);
      const made = await handler.createTaskPushNotificationConfig({ ...given, taskId: String(request.params.task) });
      return TaskPushNotificationConfig.toJSON(made);
    }),
  );
  app.get(configs, async (request: Request, reply) =>
    serve(request, reply, false, async (handler) => {
      const { ListTaskPushNotificationConfigsResponse } = await import('@a2a-js/sdk');
      const listed = await handler.listTaskPushNotificationConfigs({
        tenant: '',
        taskId: String(request.params.task),
        pageSize: 100,
        pageToken: '',
      });
      return ListTaskPushNotificationConfigsResponse.toJSON(listed);
    }),
  );
  app.get(`${configs}/:config`, async (request: Request, reply) =>
    serve(request, reply, false, async (handler) => {
      const { TaskPushNotificationConfig } = await import('@a2a-js/sdk');
      const params = request.params as Params & { config: string };
      return TaskPushNotificationConfig.toJSON(
        await handler.getTaskPushNotificationConfig({ tenant: '', taskId: String(params.task), id: params.config }),
      );
    }),
  );
  app.delete(`${configs}/:config`, async (request: Request, reply) =>
    serve(request, reply, false, async (handler) => {
      const params = request.params as Params & { config: string };
      await handler.deleteTaskPushNotificationConfig({ tenant: '', taskId: String(params.task), id: params.config });
      return {};
    }),
  );

  app.get('/agents/:handle/a2a/extendedAgentCard', async (request: Request, reply) =>
    serve(request, reply, false, async (handler) => {
      const card = await handler.extendedCard('1.0');
      reply.header('cache-control', 'no-store');
      return card;
    }),
  );
}
