/**
 * Recorded tool results played back to an eval copy instead of running its tools (docs/evals.md,
 * "Replay"): deterministic and without side effects. A call gets the first unused recording of the same
 * tool with the same arguments, else the first unused one of the same tool; a call nothing was recorded
 * for gets an error result the model reads, so a changed agent shows as a changed answer, not a hang.
 */
import type { ToolResult } from '@agt/contracts';
import type { ToolReplayer } from '../runtime/executor/loop-setup.js';
import type { RecordedTool } from './suite.js';

/** Stable JSON (sorted keys) so arguments compare by value. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonical(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export class ToolReplay implements ToolReplayer {
  private readonly unused: Array<RecordedTool & { key: string }>;

  constructor(recorded: readonly RecordedTool[]) {
    this.unused = recorded.map((tool) => ({ ...tool, key: canonical(tool.args) }));
  }

  answer(tool: string, args: unknown): ToolResult {
    const key = canonical(args);
    let index = this.unused.findIndex((item) => item.name === tool && item.key === key);
    if (index < 0) index = this.unused.findIndex((item) => item.name === tool);
    if (index < 0) return { content: `no recorded result of ${tool} to replay (eval replay)`, isError: true };
    const [item] = this.unused.splice(index, 1);
    return { content: item!.result.content, ...(item!.result.isError ? { isError: true } : {}) };
  }
}
