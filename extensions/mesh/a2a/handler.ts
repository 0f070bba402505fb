/**
 * The A2A request handler of one agent and one requester, under the official SDK's JSON-RPC
 * transport handlers (v1.0 and the v0.3 compatibility layer), which parse, translate and answer: this
 * maps A2A operations onto agt turns. Send starts a turn with the message as an `inbox` event from
 * `a2a` (never as the owner's chat; `ctx.agents.turns.deliver`), and the task id is its turnId; a
 * message on an `input-required` task answers the ask the turn waits on (an approval stays the
 * owner's: refused); cancel interrupts the turn (or, still queued, as soon as it starts); list gives the
 * requester's tasks from the records kept in the agent's file; push configs name the caller's webhooks
 * for a task's updates (push.ts).
 */
import { randomUUID } from 'node:crypto';
import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import {
  ExtendedAgentCardNotConfiguredError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import type { AgentTurnsAccess } from '@agt/contracts';
import { AgtError } from '@agt/contracts';
import type { AgentsService } from '@agt/contracts';
import { isTraceparent } from '@agt/contracts';
import type { MeshAgent } from '../directory.js';
import { buildA2ACard } from './card.js';
import { CallerUnauthenticated, type CredentialCheck } from './extended-card.js';
import { TRACE_METADATA } from './sender.js';
import { isFinal, isTerminal, MAX_PUSH_CONFIGS, type PushConfig, type TaskBook, type TaskRecord } from './tasks.js';

export interface A2AHandlerDeps {
  agents: AgentsService;
  book: TaskBook;
  /** How long a blocking send waits for the task to be final before answering with it as it is. */
  waitMs: number;
  version: string;
  baseUrl(): string;
  /** The daemon checks the owner's credential (`ctx.auth`): the extended card is offered. */
  offersExtended: boolean;
}

/** Who asks: the address bucket the tasks belong to, and the DID a signed sender proved. */
export interface Caller {
  owner: string;
  did: string | undefined;
  /**
   * The route ran the sender checks (proof, block and allow lists, rates) for this request: a message is
   * taken only then, so no method name the route did not recognise as a send gets around them.
   */
  admitted: boolean;
  /** Aborts when the request's connection closes: a stream waiting for updates ends. */
  signal?: AbortSignal;
  /** The request's `Authorization` checked against the owner's credential (`ctx.auth`): the extended card's key. */
  credential: CredentialCheck;
}

const CANCEL_WAIT_MS = 10_000;

/** The text of a message: its text parts, then its data parts as JSON, URLs and file names. */
export function messageText(message: Message): string {
  return message.parts
    .map((part) => {
      const content = part.content;
      if (!content) return '';
      if (content.$case === 'text') return content.value;
      if (content.$case === 'data') return JSON.stringify(content.value);
      if (content.$case === 'url') return `[${part.filename || 'file'}: ${content.value}]`;
      return `[${part.filename || 'file'} (${part.mediaType || 'bytes'}), ${content.value.length} bytes, not read]`;
    })
    .filter((text) => text !== '')
    .join('\n');
}

export class AgentA2AHandler implements A2ARequestHandler {
  private readonly turns: AgentTurnsAccess;

  constructor(
    private readonly deps: A2AHandlerDeps,
    private readonly agent: MeshAgent,
    private readonly caller: Caller,
  ) {
    if (!deps.agents.turns) throw new AgtError('unavailable', 'this daemon runs no agent turns for extensions');
    this.turns = deps.agents.turns;
  }

  async getAgentCard(): Promise<AgentCard> {
    return (await buildA2ACard(this.deps.agents, this.agent, this.deps.baseUrl(), this.deps.version, {
      offersExtended: this.deps.offersExtended,
    })) as unknown as AgentCard;
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    return (await this.extendedCard('1.0')) as unknown as AgentCard;
  }

  /**
   * The extended card in `shape`, signed as served, for the owner's credential only (extended-card.ts); the routes
   * send it as it is (the SDK's codecs would rewrite what the signature covers).
   */
  async extendedCard(shape: '1.0' | '0.3'): Promise<Record<string, unknown>> {
    if (!this.deps.offersExtended)
      throw new ExtendedAgentCardNotConfiguredError("this daemon does not check the owner's credential here");
    if (this.caller.credential !== 'owner') throw new CallerUnauthenticated(this.caller.credential === 'wrong');
    return buildA2ACard(this.deps.agents, this.agent, this.deps.baseUrl(), this.deps.version, {
      shape,
      extended: true,
    });
  }

  async sendMessage(params: SendMessageRequest): Promise<Message | Task> {
    const task = this.start(params);
    this.pushFromSend(task, params);
    if (params.configuration?.returnImmediately !== true) await this.deps.book.settled(task, this.deps.waitMs);
    return this.deps.book.snapshot(task, params.configuration?.historyLength);
  }

  async *sendMessageStream(params: SendMessageRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const task = this.start(params);
    this.pushFromSend(task, params);
    yield* this.follow(task);
  }

  /** A webhook given with the message (`configuration.taskPushNotificationConfig`). */
  private pushFromSend(task: TaskRecord, params: SendMessageRequest): void {
    const given = params.configuration?.taskPushNotificationConfig;
    if (given?.url) this.addPush(task, given);
  }

  async getTask(params: GetTaskRequest): Promise<Task> {
    return this.deps.book.snapshot(this.task(params.id), params.historyLength);
  }

  async cancelTask(params: CancelTaskRequest): Promise<Task> {
    const task = this.task(params.id);
    if (isTerminal(task.state)) throw new TaskNotCancelableError(`task ${task.id} has ended`);
    if (!this.turns.interrupt(task.agentId, task.id)) task.cancelWanted = true;
    await this.until(task, (state) => isTerminal(state), CANCEL_WAIT_MS);
    return this.deps.book.snapshot(task);
  }

  async *resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const task = this.task(params.id);
    if (isTerminal(task.state)) throw new UnsupportedOperationError(`task ${task.id} has ended`);
    yield* this.follow(task);
  }

  /**
   * The caller's tasks on this agent (its requester address's, as for GetTask), newest first, filtered by
   * context, state and status time; `pageToken` is the opaque cursor of the previous page.
   */
  async listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
    const size = Math.min(100, Math.max(1, Math.trunc(params.pageSize ?? 50)));
    let before: number | undefined;
    if (params.pageToken) {
      before = Number(Buffer.from(params.pageToken, 'base64url').toString('utf8'));
      if (!Number.isSafeInteger(before) || before < 1)
        throw new RequestMalformedError('pageToken is not a token of this list');
    }
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
    if (after !== undefined && Number.isNaN(after))
      throw new RequestMalformedError('statusTimestampAfter is not an ISO 8601 time');
    const page = this.deps.book.list(
      this.agent.view.id,
      this.caller.owner,
      (task) =>
        (!params.contextId || task.contextId === params.contextId) &&
        (!params.status || task.state === params.status) &&
        (after === undefined || Date.parse(task.timestamp) >= after),
      size,
      before,
    );
    return {
      tasks: page.tasks.map((task) => {
        const snapshot = this.deps.book.snapshot(task, params.historyLength);
        return params.includeArtifacts === true ? snapshot : { ...snapshot, artifacts: [] };
      }),
      nextPageToken: page.next === undefined ? '' : Buffer.from(String(page.next)).toString('base64url'),
      pageSize: size,
      totalSize: page.total,
    };
  }

  /** A webhook for the task's updates (push.ts); the same `id` replaces one. */
  async createTaskPushNotificationConfig(params: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
    const task = this.task(params.taskId);
    const config = this.addPush(task, params);
    return this.pushView(task, config);
  }

  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
  ): Promise<TaskPushNotificationConfig> {
    const task = this.task(params.taskId);
    const config = task.push.find((item) => item.id === params.id);
    if (!config) throw new TaskNotFoundError(`task ${task.id} has no push notification config ${params.id}`);
    return this.pushView(task, config);
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    const task = this.task(params.taskId);
    return { configs: task.push.map((config) => this.pushView(task, config)), nextPageToken: '' };
  }

  async deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest): Promise<void> {
    const task = this.task(params.taskId);
    task.push = task.push.filter((config) => config.id !== params.id);
    this.deps.book.save(task);
  }

  private addPush(task: TaskRecord, params: { id?: string; url: string; token?: string }): PushConfig {
    let url: URL;
    try {
      url = new URL(params.url);
    } catch {
      throw new RequestMalformedError('the push notification url is not a URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new RequestMalformedError('the push notification url must be http(s)');
    if (params.url.length > 2000) throw new RequestMalformedError('the push notification url is too long');
    const config: PushConfig = {
      id: (params.id || randomUUID()).slice(0, 200),
      url: params.url,
      ...(params.token ? { token: params.token.slice(0, 1000) } : {}),
    };
    const others = task.push.filter((item) => item.id !== config.id);
    if (others.length >= MAX_PUSH_CONFIGS)
      throw new RequestMalformedError(`a task has at most ${MAX_PUSH_CONFIGS} push notification configs`);
    task.push = [...others, config];
    this.deps.book.save(task);
    return config;
  }

  /** A config as the caller set it (its token is the caller's own). */
  private pushView(task: TaskRecord, config: PushConfig): TaskPushNotificationConfig {
    return {
      tenant: '',
      id: config.id,
      taskId: task.id,
      url: config.url,
      token: config.token ?? '',
      authentication: undefined,
    };
  }

  private task(id: string): TaskRecord {
    const task = this.deps.book.get(id, this.caller.owner, this.agent.view.id);
    if (!task || task.agentId !== this.agent.view.id) throw new TaskNotFoundError(`no task ${id}`);
    return task;
  }

  /** A new turn for a new message, or the answer to the ask a task waits on. */
  private start(params: SendMessageRequest): TaskRecord {
    if (!this.caller.admitted) throw new UnsupportedOperationError('this request was not checked as a message');
    const message = params.message;
    if (!message?.messageId) throw new RequestMalformedError('message.messageId is required');
    const text = messageText(message);
    if (text === '') throw new RequestMalformedError('the message has no content');
    if (message.taskId) {
      const task = this.task(message.taskId);
      if (isTerminal(task.state)) throw new UnsupportedOperationError(`task ${task.id} has ended; send a new message`);
      const waiting = task.waiting;
      if (waiting?.kind !== 'ask') {
        throw new UnsupportedOperationError(
          waiting
            ? "the task waits for the agent owner's decision, which only the owner gives"
            : 'the task is working; answer it when it asks for input (input-required)',
        );
      }
      this.turns.answerAsk(task.agentId, waiting.requestId, text, { fromCaller: true });
      this.deps.book.answered(task, message);
      return task;
    }
    const contextId = message.contextId || randomUUID();
    const traceparent = (message.metadata as Record<string, unknown> | undefined)?.[TRACE_METADATA];
    const sender = this.caller.did ?? `a2a:${this.caller.owner}`;
    const { turnId, events } = this.deps.book.capture(() =>
      this.turns.deliver(
        this.agent.view.id,
        {
          source: 'a2a',
          sender,
          text,
          data: {
            a2a: {
              message_id: message.messageId.slice(0, 200),
              context_id: contextId,
              signed: this.caller.did !== undefined,
            },
          },
          // The caller's trace context: the kernel checks it and the turn joins that trace (a tracer is on).
          ...(isTraceparent(traceparent) ? { traceparent } : {}),
        },
        // A repeated message (a retry) is the same turn, also after a restart (the kernel keeps keys 24 h).
        { idempotencyKey: `a2a\n${sender}\n${message.messageId}`.slice(0, 255) },
      ),
    );
    const task = this.deps.book.open(
      { id: turnId, contextId, agentId: this.agent.view.id, owner: this.caller.owner, message },
      events,
    );
    if (task.owner !== this.caller.owner)
      throw new UnsupportedOperationError('this message id was used before by another requester');
    return task;
  }

  /** The task, then its updates, until it is final (terminal or waiting for input). */
  private async *follow(task: TaskRecord): AsyncGenerator<StreamResponse, void, undefined> {
    const queue: StreamResponse[] = [];
    let wake: (() => void) | undefined;
    const stop = this.deps.book.listen(task, (event) => {
      queue.push(event);
      wake?.();
    });
    const signal = this.caller.signal;
    const gone = () => wake?.();
    signal?.addEventListener('abort', gone);
    try {
      yield { payload: { $case: 'task', value: this.deps.book.snapshot(task) } };
      if (isFinal(task.state)) return;
      while (!signal?.aborted) {
        while (queue.length > 0) {
          const event = queue.shift()!;
          yield event;
          if (event.payload?.$case === 'statusUpdate' && isFinal(event.payload.value.status?.state ?? 0)) return;
        }
        if (signal?.aborted) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      signal?.removeEventListener('abort', gone);
      stop();
    }
  }

  private until(task: TaskRecord, done: (state: number) => boolean, ms: number): Promise<void> {
    if (done(task.state)) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        stop();
        resolve();
      };
      const timer = setTimeout(finish, ms);
      const stop = this.deps.book.listen(task, () => {
        if (done(task.state)) finish();
      });
    });
  }
}
