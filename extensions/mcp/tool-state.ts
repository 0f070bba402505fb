/**
 * What the owner has seen of each agent's MCP tools, kept on this machine (the data directory's
 * `mcp-state/`, one JSON file per agent, never in the agent file): each tool's input-schema hash, and
 * whether it arrived after the server's first listing (a "new" tool, restricted when the declaration
 * says `new_tools_restricted`). A listed tool whose schema hash differs from the accepted one is
 * disabled until the owner accepts the new schema (`enable`).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson } from '@agt/contracts';

interface ToolRecord {
  /** Hash of the accepted input schema. */
  hash: string;
  /** Hash of a changed schema the owner has not accepted yet. */
  changed?: string;
  /** Arrived after the server's first listing. */
  isNew?: boolean;
}

interface AgentState {
  servers: Record<string, { tools: Record<string, ToolRecord> }>;
}

export interface ToolVerdict {
  isNew: boolean;
  /** Set when the schema changed since it was accepted. */
  changed: boolean;
}

/** A stable hash of a JSON value: sha256 of its canonical JSON (RFC 8785, object keys sorted). */
export function schemaHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

export class ToolStateStore {
  private readonly cache = new Map<string, AgentState>();

  constructor(private readonly dir: string) {}

  private file(agentId: string): string {
    return join(this.dir, `${createHash('sha256').update(agentId).digest('hex').slice(0, 32)}.json`);
  }

  private load(agentId: string): AgentState {
    let state = this.cache.get(agentId);
    if (state) return state;
    try {
      const parsed = JSON.parse(readFileSync(this.file(agentId), 'utf8')) as AgentState;
      state = parsed && typeof parsed.servers === 'object' ? parsed : { servers: {} };
    } catch {
      state = { servers: {} };
    }
    this.cache.set(agentId, state);
    return state;
  }

  private save(agentId: string, state: AgentState): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const target = this.file(agentId);
    writeFileSync(`${target}.tmp`, JSON.stringify(state));
    renameSync(`${target}.tmp`, target);
  }

  /** Records a listing of `server`'s tools and says, per tool name, whether it is new or changed. */
  observe(
    agentId: string,
    server: string,
    tools: Array<{ name: string; inputSchema: unknown }>,
  ): Map<string, ToolVerdict> {
    const state = this.load(agentId);
    const first = !state.servers[server];
    const record = (state.servers[server] ??= { tools: {} });
    let dirty = first;
    const out = new Map<string, ToolVerdict>();
    for (const tool of tools) {
      const hash = schemaHash(tool.inputSchema ?? {});
      const known = record.tools[tool.name];
      if (!known) {
        record.tools[tool.name] = first ? { hash } : { hash, isNew: true };
        dirty = true;
      } else if (known.hash !== hash && known.changed !== hash) {
        known.changed = hash;
        dirty = true;
      } else if (known.hash === hash && known.changed) {
        // The server went back to the accepted schema.
        delete known.changed;
        dirty = true;
      }
      const now = record.tools[tool.name]!;
      out.set(tool.name, { isNew: now.isNew === true, changed: now.changed !== undefined });
    }
    if (dirty) this.save(agentId, state);
    return out;
  }

  /** Accepts a changed schema; false when the tool has no change waiting. */
  enable(agentId: string, server: string, tool: string): boolean {
    const state = this.load(agentId);
    const known = state.servers[server]?.tools[tool];
    if (!known?.changed) return false;
    known.hash = known.changed;
    delete known.changed;
    this.save(agentId, state);
    return true;
  }

  forget(agentId: string): void {
    this.cache.delete(agentId);
  }
}
