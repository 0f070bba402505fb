/**
 * Pinned tool definitions (docs/mcp.md "Pinned tool definitions"): the owner's approval of a server covers
 * the tool definitions it had, so each tool's description and input-schema hash are kept per server, for
 * every agent, in the data directory (`mcp-state/tool-pins.json`, beside the registrations' other state).
 * A tool is pinned the first time it is listed; a later listing whose description or schema differs
 * from the pin (a server that turns a harmless tool's description into instructions to the model, say)
 * leaves the pin as it was and marks the tool changed, and the tool stays disabled until the owner
 * reviews the change (`agt mcp review <server>`, `POST /mcp/servers/{name}/review`), which pins the new
 * definition. A listing that goes back to the pinned definition clears the mark.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { schemaHash } from './tool-state.js';

export type PinnedField = 'description' | 'inputSchema';

export interface ToolDefinitionSeen {
  description: string;
  inputSchema: unknown;
}

interface Pinned extends ToolDefinitionSeen {
  schemaHash: string;
}

interface Pin extends Pinned {
  /** A listed definition that differs from the pin, waiting for the owner's review. */
  changed?: Pinned & { seenAt: number };
  /** When the owner last approved a change (a reviewed schema is accepted for every agent). */
  reviewedAt?: number;
}

type PinFile = Record<string, { tools: Record<string, Pin> }>;

export interface PinChange {
  tool: string;
  changed: PinnedField[];
  before: ToolDefinitionSeen;
  after: ToolDefinitionSeen;
  seenAt: number;
}

const pinned = (tool: { description?: string; inputSchema?: unknown }): Pinned => ({
  description: tool.description ?? '',
  inputSchema: tool.inputSchema ?? {},
  schemaHash: schemaHash(tool.inputSchema ?? {}),
});

const differences = (a: Pinned, b: Pinned): PinnedField[] => [
  ...(a.description !== b.description ? (['description'] as const) : []),
  ...(a.schemaHash !== b.schemaHash ? (['inputSchema'] as const) : []),
];

export class ToolPins {
  private state: PinFile | undefined;

  constructor(private readonly file: string) {}

  private load(): PinFile {
    if (this.state) return this.state;
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as PinFile;
      this.state = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
    } catch {
      this.state = {};
    }
    return this.state;
  }

  private save(): void {
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    writeFileSync(`${this.file}.tmp`, JSON.stringify(this.load()));
    renameSync(`${this.file}.tmp`, this.file);
  }

  /**
   * Records a listing of `server`'s tools: pins the new ones, marks the ones that differ from their pin.
   * Answers the changes seen for the first time (each is announced once, whichever agent listed it).
   */
  observe(server: string, tools: Array<{ name: string; description?: string; inputSchema?: unknown }>): PinChange[] {
    const record = (this.load()[server] ??= { tools: {} });
    const fresh: PinChange[] = [];
    let dirty = false;
    for (const tool of tools) {
      const seen = pinned(tool);
      const pin = record.tools[tool.name];
      if (!pin) {
        record.tools[tool.name] = seen;
        dirty = true;
        continue;
      }
      const changed = differences(pin, seen);
      if (changed.length === 0) {
        if (pin.changed) {
          delete pin.changed;
          dirty = true;
        }
        continue;
      }
      if (pin.changed && differences(pin.changed, seen).length === 0) continue;
      pin.changed = { ...seen, seenAt: Date.now() };
      dirty = true;
      fresh.push(change(tool.name, pin));
    }
    if (dirty) this.save();
    return fresh;
  }

  /** What of `tool` changed since its pin (undefined: nothing waits for review). */
  changedFields(server: string, tool: string): PinnedField[] | undefined {
    const pin = this.load()[server]?.tools[tool];
    return pin?.changed ? differences(pin, pin.changed) : undefined;
  }

  /** Whether the pinned definition of `tool` was approved in a review and is the one listed now. */
  reviewedAndCurrent(server: string, tool: string): boolean {
    const pin = this.load()[server]?.tools[tool];
    return pin?.reviewedAt !== undefined && !pin.changed;
  }

  /** Every change of `server` waiting for review, with the pinned and the listed definitions. */
  review(server: string): PinChange[] {
    const tools = this.load()[server]?.tools ?? {};
    return Object.entries(tools)
      .filter(([, pin]) => pin.changed)
      .map(([name, pin]) => change(name, pin));
  }

  known(server: string): boolean {
    return this.load()[server] !== undefined;
  }

  /** Pins the listed definitions of `tools` (every changed one when absent); answers the tools approved. */
  approve(server: string, tools?: string[]): string[] {
    const record = this.load()[server];
    const approved: string[] = [];
    for (const [name, pin] of Object.entries(record?.tools ?? {})) {
      if (!pin.changed || (tools && !tools.includes(name))) continue;
      const { seenAt: _seenAt, ...next } = pin.changed;
      record!.tools[name] = { ...next, reviewedAt: Date.now() };
      approved.push(name);
    }
    if (approved.length > 0) this.save();
    return approved;
  }

  /** A registration was removed: its pins go with it (a new one of that name starts over). */
  forget(server: string): void {
    if (!this.load()[server]) return;
    delete this.load()[server];
    this.save();
  }
}

function change(tool: string, pin: Pin): PinChange {
  const after = pin.changed!;
  return {
    tool,
    changed: differences(pin, after),
    before: { description: pin.description, inputSchema: pin.inputSchema },
    after: { description: after.description, inputSchema: after.inputSchema },
    seenAt: after.seenAt,
  };
}
