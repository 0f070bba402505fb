/**
 * The agent's tool list (`GET /agents/{id}/tools`): built-in tools of the main registry
 * (`kernel.builtinTools`), tools extensions contribute (MCP, compute, ...) and declared tools, merged by
 * name and sorted. A declaration decides `enabled`, `visible`, `restricted` and `locked`; an undeclared
 * tool takes its definition's defaults; a declared name nothing offers is listed with source `declared`.
 */
import type { ToolDeclaration, ToolDefinition } from '@agt/contracts';
import type { ToolEntry } from '../http-api/agents-api.js';

export function toolEntries(
  declared: readonly ToolDeclaration[],
  builtin: readonly ToolDefinition[],
  contributed: readonly ToolDefinition[],
): ToolEntry[] {
  const byName = new Map<string, ToolDefinition>();
  // Built-ins win over contributions with the same name (the contract's combination rule).
  for (const tool of [...builtin, ...contributed]) if (!byName.has(tool.name)) byName.set(tool.name, tool);
  const declarations = new Map(declared.map((declaration) => [declaration.name, declaration]));
  const names = new Set([...byName.keys(), ...declarations.keys()]);
  return [...names].sort().map((name) => {
    const definition = byName.get(name);
    const declaration = declarations.get(name);
    const restricted = declaration?.restricted ?? definition?.restricted ?? false;
    const locked = declaration?.locked ?? false;
    return {
      name,
      enabled: definition?.disabledReason ? false : (declaration?.enabled ?? definition?.defaultEnabled ?? true),
      visible: declaration?.visible ?? true,
      restricted,
      locked,
      source: definition?.source ?? 'declared',
      description: definition?.description ?? '',
      schema: definition?.inputSchema ?? { type: 'object' },
      restrictions: { restricted, locked },
      ...(definition?.disabledReason ? { disabledReason: definition.disabledReason } : {}),
    };
  });
}
