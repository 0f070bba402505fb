/**
 * The AgentStatus body of one loaded agent (`GET /agents/{id}/status`, the start route), built as one
 * object literal with the optional fields added after (the spread form takes V8's slow object-clone path,
 * ~2 µs per call against ~0.02 µs).
 *
 * A performance trick rests on this builder: the status route writes the body with `JSON.stringify`
 * instead of the schema's serializer (kernel/routes/agents.ts), which gives the same bytes only because
 * the fields are set here in the order that serializer writes them (required ones in schema order, then
 * handle, degraded, storage), each value of its schema's type.
 * What it buys: ~2 µs of CPU per `/status` request, 8% (median 24.0 → 22.0 µs, least 22.5 → 20.5; three
 * interleaved runs of bench/status-profile.ts, docs/performance.md "Tricks kept and removed").
 * How it is tested: test/agents-core.test.ts compares the route's bytes with the schema serializer's, with
 * a handle and without.
 * How to remove it: drop `.serializer(JSON.stringify)` from the status route; the field order here then
 * no longer matters.
 */
import type { LoadedAgent } from './loaded-agent.js';

export interface AgentStatusBody {
  id: string;
  filePath: string | null;
  name: string;
  handle?: string;
  autostart: boolean;
  runtimeState: string;
  targetState: string | null;
  loopCount: number;
  degraded?: string;
  storage?: { fileBytes: number; walBytes: number; quotaBytes: number | null; tables: Record<string, number> };
}

/** What the status needs of the runtime (absent when no runtime is installed). */
export interface RuntimeStatusSource {
  status(agent: LoadedAgent): { runtimeState: string; targetState: string | null };
}

/** What the status needs of the storage service (the file on disk: sizes and rows per table). */
export interface StorageStatusSource {
  storageOf(agent: LoadedAgent): NonNullable<AgentStatusBody['storage']>;
}

export function agentStatus(
  runtime: RuntimeStatusSource | undefined,
  agent: LoadedAgent,
  storage?: StorageStatusSource,
): AgentStatusBody {
  const state = runtime?.status(agent);
  const body: AgentStatusBody = {
    id: agent.id,
    filePath: agent.filePath,
    name: agent.name,
    autostart: agent.config.autostart ?? false,
    runtimeState: state ? state.runtimeState : agent.displayState,
    targetState: state ? state.targetState : null,
    loopCount: agent.file.loop.count('main'),
  };
  if (agent.handle) body.handle = agent.handle;
  if (agent.degraded) body.degraded = agent.degraded;
  if (storage) body.storage = storage.storageOf(agent);
  return body;
}
