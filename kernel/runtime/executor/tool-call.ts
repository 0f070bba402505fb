/**
 * Runs one tool call with the guarantees the turn needs: a time limit (`limits.tool_timeout_ms`), the turn's abort
 * signal, and no exception escaping. Time the tool spends waiting for the owner (`ask`, a suspend prompt: `humanWait`
 * says when) does not count: when the limit falls due during such a wait, the tool gets a fresh limit once the wait
 * ends (a human wait ends on an answer, or with the turn). A tool that hangs and ignores its signal is left behind (its
 * promise is no longer awaited) so the turn and the daemon go on; a tool that throws becomes an error result the model
 * can read. A tool that reports progress (`context.progress`) gets a fresh limit each time; images it returns are kept
 * within the contract's caps (`MAX_TOOL_RESULT_IMAGES`).
 */
import {
  AgtError,
  MAX_TOOL_IMAGE_BYTES,
  MAX_TOOL_RESULT_IMAGES,
  type ToolContext,
  type ToolDefinition,
  type ToolImage,
  type ToolProgress,
  type ToolResult,
} from '@agt/contracts';
import type { Clock, TimerHandle } from '../clock.js';
import { stoppedWhileToolRan, toolTimedOut } from '../errors.js';

export const MAX_TOOL_RESULT_CHARS = 32_000;
/** `tool.progress` goes out at most this often per call (a server may report far more often). */
export const PROGRESS_EVENT_MS = 100;
const MAX_PROGRESS_MESSAGE = 500;

export interface ToolCallOutcome {
  result: ToolResult;
  /** The failure code when the tool did not finish normally (`timeout`, `aborted`, `tool_error`). */
  failure?: string;
}

function clip(text: string): string {
  return text.length > MAX_TOOL_RESULT_CHARS ? `${text.slice(0, MAX_TOOL_RESULT_CHARS)}\n[result truncated]` : text;
}

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** The images a result may carry to the model, and a note for each one left out. */
function keptImages(images: unknown): { images: ToolImage[]; notes: string[] } {
  const kept: ToolImage[] = [];
  const notes: string[] = [];
  if (!Array.isArray(images)) return { images: kept, notes };
  for (const image of images as Array<Partial<ToolImage>>) {
    const type = typeof image?.mimeType === 'string' ? image.mimeType : 'unknown';
    const data = typeof image?.data === 'string' ? image.data : '';
    // base64: 4 characters per 3 bytes.
    const bytes = Math.floor((data.length * 3) / 4);
    if (!IMAGE_TYPES.has(type) || !data) notes.push(`[image of type ${type} left out: not a type models take]`);
    else if (bytes > MAX_TOOL_IMAGE_BYTES)
      notes.push(`[image of ${bytes} bytes left out: over ${MAX_TOOL_IMAGE_BYTES}]`);
    else if (kept.length >= MAX_TOOL_RESULT_IMAGES)
      notes.push(`[image left out: at most ${MAX_TOOL_RESULT_IMAGES} per result]`);
    else kept.push({ mimeType: type, data });
  }
  return { images: kept, notes };
}

export async function callTool(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  context: ToolContext,
  timeoutMs: number,
  clock: Clock,
  humanWait?: () => Promise<void> | undefined,
  announce?: (update: ToolProgress) => void,
): Promise<ToolCallOutcome> {
  const controller = new AbortController();
  const relay = () => controller.abort(context.signal.reason);
  if (context.signal.aborted) relay();
  else context.signal.addEventListener('abort', relay, { once: true });
  let timer: TimerHandle | undefined;
  let finished = false;
  let due: (() => void) | undefined;
  const reported = progressEvents(clock, announce);
  // Progress restarts a running limit; during a human wait no limit runs, so there is nothing to restart.
  const progress = (update?: ToolProgress) => {
    if (finished) return;
    if (update) reported.push(update);
    if (timer === undefined || !due) return;
    clock.clearTimeout(timer);
    timer = clock.setTimeout(due, timeoutMs);
  };
  try {
    const result = await Promise.race([
      Promise.resolve().then(() => tool.run(args, { ...context, signal: controller.signal, progress })),
      new Promise<never>((_, reject) => {
        due = () => {
          timer = undefined;
          const waiting = humanWait?.();
          if (waiting) {
            // The owner is being asked: not the tool's time. The limit starts over when the wait ends.
            void waiting.then(() => {
              if (!finished) timer = clock.setTimeout(due!, timeoutMs);
            });
            return;
          }
          const error = toolTimedOut(tool.name, timeoutMs);
          // Settle the race first, then tell the tool to stop (its abort would otherwise win the race).
          reject(error);
          controller.abort(error);
        };
        timer = clock.setTimeout(due!, timeoutMs);
      }),
      new Promise<never>((_, reject) => {
        const stop = () => reject(stoppedWhileToolRan());
        if (controller.signal.aborted) stop();
        else controller.signal.addEventListener('abort', stop, { once: true });
      }),
    ]);
    if (typeof result?.content !== 'string')
      return { result: { content: 'the tool returned no content', isError: true }, failure: 'tool_error' };
    const { images, notes } = keptImages(result.images);
    const content = notes.length > 0 ? `${result.content}\n${notes.join('\n')}` : result.content;
    return {
      result: {
        content: clip(content),
        ...(result.isError ? { isError: true } : {}),
        ...(images.length > 0 ? { images } : {}),
      },
    };
  } catch (error) {
    const code = error instanceof AgtError ? (error.details?.aborted ? 'aborted' : error.code) : 'tool_error';
    const message = error instanceof Error ? error.message : String(error);
    return {
      result: { content: `Tool ${tool.name} failed: ${clip(message)}`, isError: true },
      failure: code === 'timeout' || code === 'aborted' ? code : 'tool_error',
    };
  } finally {
    finished = true;
    reported.close();
    clock.clearTimeout(timer);
    context.signal.removeEventListener('abort', relay);
  }
}

/**
 * `tool.progress` for one call: the first update at once, then at most one per {@link PROGRESS_EVENT_MS} (the
 * newest wins); what is held when the call ends is dropped (`tool.completed` follows).
 */
function progressEvents(clock: Clock, announce: ((update: ToolProgress) => void) | undefined) {
  let last = Number.NEGATIVE_INFINITY;
  let held: ToolProgress | undefined;
  let timer: TimerHandle | undefined;
  const send = (update: ToolProgress) => {
    last = clock.now();
    const { progress, total, message } = update;
    if (typeof progress !== 'number' || !Number.isFinite(progress)) return;
    announce?.({
      progress,
      ...(typeof total === 'number' && Number.isFinite(total) ? { total } : {}),
      ...(typeof message === 'string' && message ? { message: message.slice(0, MAX_PROGRESS_MESSAGE) } : {}),
    });
  };
  return {
    push(update: ToolProgress) {
      if (!announce) return;
      const wait = last + PROGRESS_EVENT_MS - clock.now();
      if (wait <= 0 && timer === undefined) return send(update);
      held = update;
      timer ??= clock.setTimeout(
        () => {
          timer = undefined;
          const next = held;
          held = undefined;
          if (next) send(next);
        },
        Math.max(0, wait),
      );
    },
    close() {
      clock.clearTimeout(timer);
      timer = undefined;
      held = undefined;
    },
  };
}
