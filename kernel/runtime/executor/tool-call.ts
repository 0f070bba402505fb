/**
 * Runs one tool call with the guarantees the turn needs: a time limit (`limits.tool_timeout_ms`), the
 * turn's abort signal, and no exception escaping. Time the tool spends waiting for the owner (`ask`, a
 * suspend prompt: `humanWait` says when) does not count: when the limit falls due during such a wait,
 * the tool gets a fresh limit once the wait ends (a human wait ends on an answer, or with the turn). A tool that hangs and ignores its signal is left
 * behind (its promise is no longer awaited) so the turn and the daemon go on; a tool that throws
 * becomes an error result the model can read.
 */
import { AgtError } from '../../../contracts/errors.js';
import type { ToolContext, ToolDefinition, ToolResult } from '../../../contracts/tools.js';
import type { Clock, TimerHandle } from '../clock.js';
import { stoppedWhileToolRan, toolTimedOut } from '../errors.js';

export const MAX_TOOL_RESULT_CHARS = 32_000;

export interface ToolCallOutcome {
  result: ToolResult;
  /** The failure code when the tool did not finish normally (`timeout`, `aborted`, `tool_error`). */
  failure?: string;
}

function clip(text: string): string {
  return text.length > MAX_TOOL_RESULT_CHARS ? `${text.slice(0, MAX_TOOL_RESULT_CHARS)}\n[result truncated]` : text;
}

export async function callTool(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  context: ToolContext,
  timeoutMs: number,
  clock: Clock,
  humanWait?: () => Promise<void> | undefined,
): Promise<ToolCallOutcome> {
  const controller = new AbortController();
  const relay = () => controller.abort(context.signal.reason);
  if (context.signal.aborted) relay();
  else context.signal.addEventListener('abort', relay, { once: true });
  let timer: TimerHandle | undefined;
  let finished = false;
  try {
    const result = await Promise.race([
      Promise.resolve().then(() => tool.run(args, { ...context, signal: controller.signal })),
      new Promise<never>((_, reject) => {
        const due = () => {
          timer = undefined;
          const waiting = humanWait?.();
          if (waiting) {
            // The owner is being asked: not the tool's time. The limit starts over when the wait ends.
            void waiting.then(() => {
              if (!finished) timer = clock.setTimeout(due, timeoutMs);
            });
            return;
          }
          const error = toolTimedOut(tool.name, timeoutMs);
          // Settle the race first, then tell the tool to stop (its abort would otherwise win the race).
          reject(error);
          controller.abort(error);
        };
        timer = clock.setTimeout(due, timeoutMs);
      }),
      new Promise<never>((_, reject) => {
        const stop = () => reject(stoppedWhileToolRan());
        if (controller.signal.aborted) stop();
        else controller.signal.addEventListener('abort', stop, { once: true });
      }),
    ]);
    if (typeof result?.content !== 'string') return { result: { content: 'the tool returned no content', isError: true }, failure: 'tool_error' };
    return { result: { content: clip(result.content), ...(result.isError ? { isError: true } : {}) } };
  } catch (error) {
    const code = error instanceof AgtError ? (error.details?.aborted ? 'aborted' : error.code) : 'tool_error';
    const message = error instanceof Error ? error.message : String(error);
    return { result: { content: `Tool ${tool.name} failed: ${clip(message)}`, isError: true }, failure: code === 'timeout' || code === 'aborted' ? code : 'tool_error' };
  } finally {
    finished = true;
    clock.clearTimeout(timer);
    context.signal.removeEventListener('abort', relay);
  }
}
