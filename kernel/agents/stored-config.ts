/**
 * The check of a config read from an agent file, in a module of its own so the summary worker
 * (credentials/file-reader-child.ts) imports it without the registry's graph.
 */
import { AgentConfigSchema } from './config-schema.js';
import { type AgentConfig, firstSchemaError } from '@agt/contracts';
import { storedConfigInvalid } from './errors.js';

/** Validates a stored config; `load_failed` naming the bad path. */
export function validateStoredConfig(config: unknown, filePath: string): AgentConfig {
  const problem = firstSchemaError(AgentConfigSchema, config);
  if (problem !== null) {
    throw storedConfigInvalid(filePath, problem);
  }
  return config as AgentConfig;
}
