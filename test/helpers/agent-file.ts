/**
 * Test helper: builds agent files with the real {@link AgentFile} class. `createAgentFile(dir, partial)`
 * writes `<dir>/<name>.agt` holding a complete, valid AgentConfig (the partial is merged over defaults)
 * and returns its path; pass `{version: 1}` to build an old-schema file for migration tests.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { AgentConfig } from '../../contracts/agent-config.js';
import { AgentFile } from '../../kernel/agents/agent-file.js';

/** A complete, valid config; `overrides` replace top-level fields. */
export function agentConfig(overrides: Partial<AgentConfig> = {}): AgentConfig {
  const id = overrides.id ?? `agt-${randomUUID()}`;
  return {
    agt_version: '0.2',
    id,
    name: overrides.name ?? `agent-${id.slice(-8)}`,
    description: 'a test agent',
    state: 'idle',
    autonomous: false,
    model: { provider: 'local', model_id: 'test-model' },
    instructions: 'Be brief.',
    context: {},
    tools: [],
    triggers: {},
    security: {},
    limits: {},
    messaging: { mode: 'respond_only' },
    metadata: { created_at: 0, author: 'test' },
    ...overrides,
  };
}

export interface CreateAgentFileOptions {
  /** File name without folder; default `<name>.agt`. */
  fileName?: string;
  /** Schema version to write (default: current). */
  version?: number;
  /** Runs on the open file before it is closed (seed rows). */
  seed?: (file: AgentFile) => void;
}

/** Writes a new agent file into `dir`; resolves to its absolute path once it is closed. */
export async function createAgentFile(
  dir: string,
  partialConfig: Partial<AgentConfig> = {},
  options: CreateAgentFileOptions = {},
): Promise<string> {
  const config = agentConfig(partialConfig);
  const path = join(dir, options.fileName ?? `${config.name}.agt`);
  const file = AgentFile.create(path, config, { version: options.version });
  try {
    options.seed?.(file);
  } finally {
    await file.close();
  }
  return path;
}
