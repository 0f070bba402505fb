/**
 * The AgentStatus body of one loaded agent (`GET /agents/{id}/status`, the start route), built as one
 * object literal with the optional fields added after: the spread form (`{...summary, ..., ...(degraded ?
 * {degraded} : {})}`) takes V8's slow object-clone path, ~2 us per call against ~0.02 us, about 5% of
 * the status route's CPU. The fields are set in the order the schema's serializer writes them (required
 * ones in schema order, then handle, degraded, storage): the status route writes this body with
 * JSON.stringify and must give the same bytes (test/agents-core.test.ts).
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
