/**
 * Reading one user template file. Two shapes are accepted:
 * - `{"name": "...", "description": "...", "config": { ...AgentConfig without id and name }}`, or
 * - a bare agent config (has `agt_version`), for example one copied from an existing agent; its `id`
 *   is dropped and its `name` becomes the template's name.
 * The config must validate as an AgentConfig once an id and a name are filled in.
 */
import { AgentConfigSchema } from '../agents/config-schema.js';
import { firstSchemaError } from '@agt/contracts';
import type { TemplateConfig } from './types.js';

export const MAX_TEMPLATE_BYTES = 256 * 1024;

export interface ParsedTemplate {
  name: string;
  description: string;
  /** The config when the file holds an object there (valid or not); null when unparseable. */
  config: Record<string, unknown> | null;
  error: string | null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

export function parseTemplate(id: string, raw: Buffer): ParsedTemplate {
  const invalid = (
    error: string,
    config: Record<string, unknown> | null = null,
    name = id,
    description = '',
  ): ParsedTemplate => ({
    name,
    description,
    config,
    error,
  });
  if (raw.length > MAX_TEMPLATE_BYTES) return invalid(`file is larger than ${MAX_TEMPLATE_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch (error) {
    return invalid(`not valid JSON: ${(error as Error).message}`);
  }
  if (!isObject(parsed)) return invalid('expected a JSON object');

  let source: Record<string, unknown>;
  let name: unknown;
  let description: unknown;
  if (isObject(parsed.config)) {
    source = parsed.config;
    name = parsed.name ?? id;
    description = parsed.description ?? source.description ?? '';
  } else if ('agt_version' in parsed) {
    source = parsed;
    name = parsed.name ?? id;
    description = parsed.description ?? '';
  } else {
    return invalid('expected {name, description, config} or an agent config with agt_version');
  }
  if (typeof name !== 'string' || name.trim() === '') return invalid('`name` must be a non-empty string');
  if (typeof description !== 'string') return invalid('`description` must be a string', null, name);

  const { id: _id, name: _name, ...rest } = source;
  const config: Record<string, unknown> = { ...rest };
  // The wrapper's description stands in for a config without one.
  if (config.description === undefined) config.description = description;
  // Check with placeholder id and name: those come from the created agent, not the template.
  const problem = firstSchemaError(AgentConfigSchema, { ...config, id: 'template-check', name: 'template-check' });
  if (problem !== null) return invalid(`config is not a valid agent config at ${problem}`, config, name, description);
  return { name, description, config, error: null };
}

export const asTemplateConfig = (config: Record<string, unknown>): TemplateConfig =>
  config as unknown as TemplateConfig;
