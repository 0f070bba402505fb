/**
 * One turn of one loop: append the incoming rows, then call the model and run its tool calls until it
 * answers without tools or a `limits` cap stops it. Every message is committed to `agt_loop` before the
 * event that announces it. The runner never throws: failures come back as a {@link TurnResult}.
 */
import {
  AgtError,
  isAgtError,
  type EventPayloads,
  type EventType,
  type ModelClient,
  type ModelSettings,
  type ModelTool,
  type ToolCall,
  type ToolContext,
  type Logger,
  type ToolDefinition,
  type ToolImage,
  type TriggerType,
} from '@agt/contracts';
import { setImmediate as afterPendingIo, setTimeout as sleep } from 'node:timers/promises';
import type { LoopRowInput } from '../../agents/stores/loop-store.js';
import { systemClock, type Clock, type TimerHandle } from '../clock.js';
import { approvalWaitFailed } from '../errors.js';
import type { HilStore } from '../hil.js';
import {
  DEFAULT_LIMITS,
  limitOf,
  MAX_CONTEXT_ROWS,
  type ExecutorState,
  type QueueItem,
  type RuntimeAgent,
} from '../types.js';
import { buildMessages, rowText, triggerText, unansweredCalls } from './context.js';
import { isParked, type TurnResult } from './loop-executor.js';
import { callTool } from './tool-call.js';
import { nextWriteSlice } from '../../write-slices.js';

export interface ActiveTool {
  def: ToolDefinition;
  /** Visible in the model's tool list. */
  visible: boolean;
  restricted: boolean;
}

/** What a turn needs from its agent runtime; event helpers are bound to this loop and turn. */
export interface TurnEnv {
  agent: RuntimeAgent;
  loop: string;
  turnId: string;
  head: QueueItem;
  signal: AbortSignal;
  setState(state: ExecutorState): void;
  /** Takes the chats queued so far into this turn (chat turns, once); see LoopExecutor. */
  absorb(): QueueItem[];
  /** Chats accepted for this loop so far (a counter); absent: the turn waits one check phase only. */
  arrivals?(): number;
  emit<T extends EventType>(type: T, payload: EventPayloads[T]): void;
  log(level: 'info' | 'warn' | 'error', message: string, data?: unknown): void;
  /** Offers an event to the evaluator with this loop and turn as origin (self-suppression). */
  fire(type: TriggerType, data: unknown): void;
  /** The client and settings for this loop's model; throws `unavailable` when no provider resolves it. */
  model(): Promise<{ client: ModelClient; settings: ModelSettings }>;
  system(): string;
  /** The recalled-memories block for this turn's input (docs/memory.md); absent or null: none. */
  recall?(input: string): Promise<string | null>;
  tools(): Promise<Map<string, ActiveTool>>;
  /** A running call's traceparent (`ToolContext.trace`); absent when no tracer is offered. */
  toolTrace?(callId: string, tool: string): string | undefined;
  hil: HilStore;
  clock: Clock;
  logger: Logger;
}

interface Counters {
  llmCalls: number;
  toolCalls: number;
}

function limitsOf(agent: RuntimeAgent) {
  return {
    maxLlm: limitOf(agent.config, 'max_llm_calls_per_turn', DEFAULT_LIMITS.max_llm_calls_per_turn),
    maxTools: limitOf(agent.config, 'max_tool_calls_per_turn', DEFAULT_LIMITS.max_tool_calls_per_turn),
    toolTimeoutMs: limitOf(agent.config, 'tool_timeout_ms', DEFAULT_LIMITS.tool_timeout_ms),
  };
}

function append(env: TurnEnv, row: Omit<LoopRowInput, 'loop' | 'turnId'>): void {
  const committed = env.agent.file.loop.append({ ...row, loop: env.loop, turnId: env.turnId });
  env.emit('loop.appended', { row_id: committed.id, role: committed.role, kind: committed.kind });
}

function incomingRow(item: Exclude<QueueItem, { kind: 'resume' }>): Omit<LoopRowInput, 'loop' | 'turnId'> {
  if (item.kind === 'chat')
    return { role: 'user', kind: 'message', content: { text: item.text, chat_turn_id: item.turnId } };
  return {
    role: 'user',
    kind: 'trigger',
    content: {
      text: triggerText(item.trigger, item.events, item.count),
      trigger: item.trigger,
      events: item.events,
      count: item.count,
    },
  };
}

/**
 * Commits incoming rows together with the start of their accepted turns in `agt_queue` (the head's row
 * becomes `running`; absorbed chats name this turn), then announces the rows. A crash leaves either
 * both or neither, so a restart knows whether a chat was already written into a turn.
 */
function appendIncoming(
  env: TurnEnv,
  items: Array<Exclude<QueueItem, { kind: 'resume' }>>,
  role: 'head' | 'absorbed',
): void {
  const file = env.agent.file;
  const now = env.clock.now();
  const rows = file.transaction(() => {
    if (role === 'head') file.queue.markRunning(env.turnId, now);
    else
      file.queue.markAbsorbed(
        items.map((item) => item.turnId),
        env.turnId,
        now,
      );
    return items.map((item) => file.loop.append({ ...incomingRow(item), loop: env.loop, turnId: env.turnId }));
  });
  for (const row of rows) env.emit('loop.appended', { row_id: row.id, role: row.role, kind: row.kind });
}

/** Absorbed chats written per transaction: the event loop turns between slices (other requests, `/health`). */
const ABSORB_SLICE = 64;

/**
 * Writes absorbed chats {@link ABSORB_SLICE} at a time, each slice with its `agt_queue` marks in one
 * transaction (a crash between slices leaves the later ones queued: they run after the restart, as any
 * chat not yet written into a turn). All of them are written even when the turn is stopped meanwhile:
 * they were taken from the queue, and nothing said is lost.
 */
async function appendAbsorbed(env: TurnEnv, items: Array<Extract<QueueItem, { kind: 'chat' }>>): Promise<void> {
  for (let i = 0; i < items.length; i += ABSORB_SLICE) {
    // One slice of the daemon's per event-loop turn: ten agents' bursts do not all write at once.
    await nextWriteSlice();
    appendIncoming(env, items.slice(i, i + ABSORB_SLICE), 'absorbed');
  }
}

export async function runTurn(env: TurnEnv): Promise<TurnResult> {
  const counters: Counters = { llmCalls: 0, toolCalls: 0 };
  try {
    if (env.head.kind === 'resume') {
      const stopped = await resume(env, counters);
      if (stopped) return stopped;
    } else {
      // The incoming row is written even when the turn is stopped right away: nothing said is lost.
      appendIncoming(env, [env.head], 'head');
    }
    return await converse(env, counters);
  } catch (error) {
    if (env.signal.aborted) return { kind: 'stopped', ...counters };
    const agtError = isAgtError(error) ? error : undefined;
    if (!agtError) env.logger.error({ err: error, agentId: env.agent.id, loop: env.loop }, 'turn failed unexpectedly');
    const status = agtError?.details?.upstreamStatus;
    return {
      kind: 'error',
      code: agtError?.code ?? 'internal_error',
      message: agtError?.message ?? `unexpected runtime failure: ${(error as Error)?.message ?? String(error)}`,
      ...(typeof status === 'number' ? { status } : {}),
      ...counters,
    };
  }
}

/** How long a chat turn's first model call waits at most for a burst of chats to end. */
export const ABSORB_WAIT_MS = 250;
/** In a burst, the quiet time (no chat arrived) that ends it. */
const BURST_QUIET_MS = 20;

/**
 * Waits for the requests already read to be handled (one check phase). When chats for this loop arrived
 * meanwhile (a burst: 1,000 over a few hundred connections, answered a slice at a time), it waits on
 * while they keep arriving, until {@link BURST_QUIET_MS} passed without one or {@link ABSORB_WAIT_MS} in
 * all: the burst joins one turn, instead of model calls started between two of its chats being
 * interrupted by the next, as the chat rules require (docs/runtime.md), and started again. A lone chat
 * waits one check phase, as before: nothing arrives meanwhile.
 */
async function whileChatsArrive(env: TurnEnv): Promise<void> {
  const until = performance.now() + ABSORB_WAIT_MS;
  let seen = env.arrivals?.();
  await afterPendingIo();
  let arriving = false;
  while (env.arrivals && performance.now() < until && !env.signal.aborted) {
    const now = env.arrivals();
    if (now !== seen) {
      seen = now;
      arriving = true;
      await afterPendingIo();
    } else if (arriving) {
      arriving = false;
      await sleep(BURST_QUIET_MS);
      // The requests that came meanwhile are read (poll phase) before the count is looked at: a timer
      // is due before the I/O of a process that was descheduled is read.
      await afterPendingIo();
    } else break;
  }
}

/** The text of this turn's incoming rows (what recall searches with). */
function turnInput(env: TurnEnv): string {
  const rows = env.agent.file.loop
    .tail(env.loop, MAX_CONTEXT_ROWS)
    .filter((row) => row.turn_id === env.turnId && row.role === 'user');
  return rows
    .map((row) => rowText(row.content))
    .join('\n')
    .slice(0, 4_000);
}

async function converse(env: TurnEnv, counters: Counters): Promise<TurnResult> {
  const limits = limitsOf(env.agent);
  // Recalled once per turn, before its first model call, and given with every call of the turn.
  let recalled: string | null | undefined;
  for (;;) {
    if (env.signal.aborted) return { kind: 'stopped', ...counters };
    if (counters.llmCalls >= limits.maxLlm) {
      env.log('warn', `turn ${env.turnId} stopped at limits.max_llm_calls_per_turn (${limits.maxLlm})`);
      return { kind: 'completed', text: null, stopReason: 'max_llm_calls', ...counters };
    }
    env.setState('thinking');
    const { client, settings } = await env.model();
    const tools = await env.tools();
    const modelTools: ModelTool[] = [...tools.values()]
      .filter((t) => t.visible)
      .map((t) => ({ name: t.def.name, description: t.def.description, inputSchema: t.def.inputSchema }));
    if (counters.llmCalls === 0) {
      // Chats queued meanwhile join this turn as consecutive user rows before its first model call. The
      // call waits for the requests already read to be handled (the check phase after them), so a burst
      // of chats joins one turn instead of each starting a model call that the next one interrupts.
      if (env.head.kind === 'chat') await whileChatsArrive(env);
      const absorbed = env
        .absorb()
        .filter((item): item is Extract<QueueItem, { kind: 'chat' }> => item.kind === 'chat');
      if (absorbed.length > 0) {
        await appendAbsorbed(env, absorbed);
        env.emit('chat.delivered', { turn_ids: absorbed.map((item) => item.turnId) });
      }
    }
    if (env.signal.aborted) return { kind: 'stopped', ...counters };
    if (recalled === undefined) recalled = env.recall ? await recallSafely(env) : null;
    const messages = buildMessages(env.agent.file.loop.tail(env.loop, MAX_CONTEXT_ROWS));
    const call = counters.llmCalls + 1;
    const startedAt = env.clock.now();
    const deltas = new DeltaCoalescer((text) => env.emit('llm.delta', { text, call }));
    let response: Awaited<ReturnType<ModelClient['complete']>>;
    try {
      response = await client.complete({
        agentId: env.agent.id,
        turnId: env.turnId,
        loop: env.loop,
        purpose: 'turn',
        model: settings,
        system: recalled ? `${env.system()}\n\n${recalled}` : env.system(),
        messages,
        tools: modelTools,
        signal: env.signal,
        onDelta: (text) => deltas.push(text),
      });
    } finally {
      // What streamed is announced before anything else of this call (the row, llm.completed, an error).
      deltas.close();
    }
    counters.llmCalls++;
    const toolCalls = response.toolCalls ?? [];
    // Reasoning blocks (with their signatures) go back to the provider with this message next call.
    const reasoning =
      Array.isArray(response.reasoning) && response.reasoning.length > 0 ? { reasoning: response.reasoning } : {};
    append(env, {
      role: 'assistant',
      kind: toolCalls.length > 0 ? 'tool_call' : 'message',
      content:
        toolCalls.length > 0
          ? { text: response.text ?? '', toolCalls, ...reasoning }
          : { text: response.text ?? '', ...reasoning },
      model: response.model,
      provider: response.provider,
      usage: response.usage,
      cost: response.cost,
    });
    env.emit('llm.completed', {
      provider: response.provider,
      model: response.model,
      usage: response.usage,
      cost: response.cost,
      duration_ms: Math.max(0, env.clock.now() - startedAt),
      stop_reason: response.stopReason,
      ...(response.responseId ? { response_id: response.responseId } : {}),
    });
    env.fire('on_llm_call', {
      provider: response.provider,
      model: response.model,
      usage: response.usage,
      cost: response.cost,
      stop_reason: response.stopReason,
    });
    if (toolCalls.length === 0)
      return { kind: 'completed', text: response.text ?? '', stopReason: response.stopReason, ...counters };

    env.setState('tool_use');
    const stopped = await runToolCalls(env, tools, toolCalls, counters, response.text ?? null);
    if (stopped) return stopped;
  }
}

/** Recall never fails a turn: a failure is logged and the turn goes on without memories. */
async function recallSafely(env: TurnEnv): Promise<string | null> {
  try {
    return (await env.recall?.(turnInput(env))) ?? null;
  } catch (error) {
    env.log('warn', `memory recall failed: ${(error as Error)?.message ?? String(error)}`);
    return null;
  }
}

/** Runs a round of tool calls one by one; a result when the turn ends here, undefined to call the model again. */
async function runToolCalls(
  env: TurnEnv,
  tools: Map<string, ActiveTool>,
  toolCalls: ToolCall[],
  counters: Counters,
  text: string | null,
): Promise<TurnResult | undefined> {
  const limits = limitsOf(env.agent);
  for (let i = 0; i < toolCalls.length; i++) {
    const toolCall = toolCalls[i]!;
    // Parked at shutdown: the unanswered calls stay open for the resumed turn.
    if (isParked(env.signal)) return { kind: 'stopped', ...counters };
    if (env.signal.aborted || counters.toolCalls >= limits.maxTools) {
      // Answer every remaining call so the history stays well-formed for the provider.
      const why = env.signal.aborted
        ? 'the turn was stopped before this call ran'
        : `limits.max_tool_calls_per_turn (${limits.maxTools}) reached`;
      for (const rest of toolCalls.slice(i)) append(env, toolRow(rest, why, true));
      if (env.signal.aborted) return { kind: 'stopped', ...counters };
      env.log('warn', `turn ${env.turnId} stopped at limits.max_tool_calls_per_turn (${limits.maxTools})`);
      return { kind: 'completed', text, stopReason: 'max_tool_calls', ...counters };
    }
    counters.toolCalls++;
    await runToolCall(env, tools, toolCall, limits.toolTimeoutMs);
  }
  return undefined;
}

/**
 * A turn resumed after a restart (it waited for the owner when the daemon stopped): the counters start
 * from what the turn already did, the unanswered calls of its last round run (the one that waited takes
 * up its approval task or owner prompt from before the restart), then the turn goes on as usual.
 */
async function resume(env: TurnEnv, counters: Counters): Promise<TurnResult | undefined> {
  const rows = env.agent.file.loop.ofTurn(env.loop, env.turnId);
  counters.llmCalls = rows.filter((row) => row.role === 'assistant').length;
  counters.toolCalls = rows.filter((row) => row.role === 'tool').length;
  const open = unansweredCalls(rows);
  if (open.length === 0) return undefined;
  const tools = await env.tools();
  env.setState('tool_use');
  const lastText = rows.filter((row) => row.role === 'assistant').at(-1)?.content as { text?: unknown } | undefined;
  return runToolCalls(env, tools, open, counters, typeof lastText?.text === 'string' ? lastText.text : null);
}

/** How long streamed text is gathered before one `llm.delta` carries it (wall-clock time). */
export const DELTA_FLUSH_MS = 100;

/**
 * Gathers a call's streamed text so a long answer becomes one `llm.delta` per {@link DELTA_FLUSH_MS}
 * instead of one per token (the event buffer holds 1000 frames for every agent). Order and text are kept
 * exactly: the events' texts concatenate to what streamed. `close` flushes the rest; a delta after it
 * is emitted at once.
 */
export class DeltaCoalescer {
  private buffer = '';
  private timer: TimerHandle | undefined;
  private closed = false;

  constructor(
    private readonly emit: (text: string) => void,
    private readonly flushMs = DELTA_FLUSH_MS,
  ) {}

  push(text: string): void {
    if (!text) return;
    if (this.closed) return this.emit(text);
    this.buffer += text;
    this.timer ??= systemClock.setTimeout(() => this.flush(), this.flushMs);
  }

  close(): void {
    this.flush();
    this.closed = true;
  }

  private flush(): void {
    systemClock.clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.buffer) return;
    const text = this.buffer;
    this.buffer = '';
    this.emit(text);
  }
}

function toolRow(
  call: ToolCall,
  text: string,
  isError: boolean,
  images?: ToolImage[],
): Omit<LoopRowInput, 'loop' | 'turnId'> {
  return {
    role: 'tool',
    kind: 'tool_result',
    content: { toolCallId: call.id, name: call.name, text, isError, ...(images?.length ? { images } : {}) },
  };
}

async function runToolCall(
  env: TurnEnv,
  tools: Map<string, ActiveTool>,
  call: ToolCall,
  timeoutMs: number,
): Promise<void> {
  const started = env.clock.now();
  env.emit('tool.started', { tool: call.name, call_id: call.id, args: call.args });
  const active = tools.get(call.name);
  let text: string;
  let isError = false;
  /** Why the call failed, for `tool.completed` (telemetry's `error.type`). */
  let failure: string | undefined;
  let images: ToolImage[] | undefined;
  // Invisible tools are for authorized code only: a model that names one anyway is refused.
  if (!active?.visible) {
    text = `Unknown or disabled tool: ${call.name}`;
    isError = true;
    failure = 'unknown_tool';
  } else {
    let args = call.args;
    let taskId: string | undefined;
    let denied: string | undefined;
    if (active.restricted) {
      env.setState('awaiting_approval');
      const { task, decision } = env.hil.requestApproval({
        tool: call.name,
        args,
        loop: env.loop,
        turnId: env.turnId,
        callId: call.id,
        signal: env.signal,
      });
      taskId = task.id;
      const outcome = await decision.catch((error: unknown) => {
        if (env.signal.aborted) throw error;
        throw approvalWaitFailed(error);
      });
      env.setState('tool_use');
      if (outcome.approved) args = outcome.args;
      else denied = outcome.reason ?? 'no reason given';
    }
    if (denied !== undefined) {
      text = `The owner denied this call of ${call.name}: ${denied}`;
      isError = true;
      failure = 'denied';
    } else {
      // The tool time limit is wall-clock time, whatever clock drives triggers; waits for the owner
      // (ask, a suspend prompt) do not count.
      let asked = 0;
      let sampled = 0;
      const context: ToolContext = {
        agentId: env.agent.id,
        loop: env.loop,
        turnId: env.turnId,
        callId: call.id,
        signal: env.signal,
        logger: env.logger,
        ...(env.toolTrace ? { trace: () => traceHeaders(env.toolTrace!(call.id, call.name)) } : {}),
        // A tool's own questions (an MCP server's elicitation) are asks of the turn; each is keyed by the
        // call and its order in it, so a turn resumed after a restart finds the one it waited on.
        ask: async (question, options) => {
          const key = `${call.id}:ask:${++asked}`;
          env.setState('awaiting_ask');
          try {
            return await env.hil.ask({
              question,
              ...(options?.schema ? { schema: options.schema } : {}),
              loop: env.loop,
              turnId: env.turnId,
              callId: key,
              signal: options?.signal ? AbortSignal.any([env.signal, options.signal]) : env.signal,
            });
          } finally {
            if (!env.signal.aborted) env.setState('tool_use');
          }
        },
        sample: async (request) => {
          const signal = request.signal ? AbortSignal.any([env.signal, request.signal]) : env.signal;
          let taskId: string | undefined;
          if (request.approval) {
            env.setState('awaiting_approval');
            const { task, decision } = env.hil.requestApproval({
              tool: request.approval.tool,
              args: request.approval.args,
              loop: env.loop,
              turnId: env.turnId,
              callId: `${call.id}:sample:${++sampled}`,
              signal,
              humanWait: true,
            });
            taskId = task.id;
            const outcome = await decision;
            if (!env.signal.aborted) env.setState('tool_use');
            if (!outcome.approved)
              throw new AgtError('forbidden', `the owner denied it: ${outcome.reason ?? 'no reason given'}`);
          }
          try {
            const { client, settings } = await env.model();
            const cap = settings.max_tokens ?? undefined;
            const maxTokens =
              request.maxTokens !== undefined ? Math.min(request.maxTokens, cap ?? request.maxTokens) : cap;
            const response = await client.complete({
              agentId: env.agent.id,
              turnId: env.turnId,
              loop: env.loop,
              purpose: request.purpose,
              model: {
                ...settings,
                ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
                ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
              },
              system: request.system ?? '',
              messages: request.messages.map((m) => ({ ...m })),
              tools: request.tools ?? [],
              signal,
            });
            if (taskId) env.hil.completeTask(taskId, true, `answered by ${response.model}`);
            // Tool calls only answer a request that offered tools; the caller runs them, never the turn.
            const calls = request.tools?.length ? response.toolCalls : [];
            return {
              text: response.text ?? '',
              model: response.model,
              stopReason: response.stopReason,
              ...(calls.length ? { toolCalls: calls.map((c) => ({ ...c })) } : {}),
            };
          } catch (error) {
            if (taskId) env.hil.completeTask(taskId, false, (error as Error).message);
            throw error;
          }
        },
      };
      const limitMs = active.def.timeoutMs ?? timeoutMs;
      const outcome = await callTool(
        active.def,
        args,
        context,
        limitMs,
        systemClock,
        () => env.hil.humanWaitOf(env.turnId),
        (update) => env.emit('tool.progress', { tool: call.name, call_id: call.id, ...update }),
      );
      // Parked at shutdown while the tool asked the owner: no result row, the resumed turn asks again.
      if (outcome.failure === 'aborted' && isParked(env.signal)) throw env.signal.reason;
      text = outcome.result.content;
      isError = outcome.result.isError === true;
      images = outcome.result.images;
      failure = outcome.failure ?? (isError ? 'tool_error' : undefined);
      if (taskId) env.hil.completeTask(taskId, !isError, text);
      if (outcome.failure && outcome.failure !== 'aborted') {
        env.log(
          outcome.failure === 'timeout' ? 'warn' : 'error',
          `tool ${call.name} failed (${outcome.failure}): ${text.slice(0, 500)}`,
          { tool: call.name, call_id: call.id },
        );
      }
    }
  }
  append(env, toolRow(call, text, isError, images));
  env.emit('tool.completed', {
    tool: call.name,
    call_id: call.id,
    ok: !isError,
    duration_ms: Math.max(0, env.clock.now() - started),
    ...(isError ? { error: failure ?? 'tool_error' } : {}),
  });
  env.fire('on_tool_call', { tool: call.name, call_id: call.id, args: call.args, ok: !isError });
}

const traceHeaders = (traceparent: string | undefined) => (traceparent ? { traceparent } : undefined);
