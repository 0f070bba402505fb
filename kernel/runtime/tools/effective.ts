/**
 * Which tools an agent (and one of its loops) may use, from the tool definitions and the agent's
 * `tools` declarations:
 *
 * - `enabled`: the declaration's flag; an undeclared tool falls back to its definition's
 *   `defaultEnabled` (true when unset, as in the agent's tool list).
 * - `visible`: in the model's tool list when enabled (default true). An enabled but invisible tool is
 *   for authorized code only: the model cannot call it.
 * - `restricted`: the declaration's flag, else the definition's; a model call then needs the owner's
 *   approval (an approval task).
 * - `locked`: an owner lock; the agent's own `sys_update_config` cannot change the declaration.
 * - Inner loops: their `tools` list (default `loop_send`, `loop_list`, `sys_set_state`) is an absolute
 *   allow-list intersected with what the agent has enabled.
 */
import type { AgentConfig, ToolDefinition } from '@agt/contracts';

export const DEFAULT_INNER_LOOP_TOOLS = ['loop_send', 'loop_list', 'sys_set_state'];

export interface EffectiveTool {
  def: ToolDefinition;
  enabled: boolean;
  visible: boolean;
  restricted: boolean;
  locked: boolean;
}

export function effectiveTools(config: AgentConfig, definitions: ToolDefinition[], loop = 'main'): EffectiveTool[] {
  const declared = new Map(config.tools.map((decl) => [decl.name, decl]));
  let allow: Set<string> | undefined;
  if (loop !== 'main') {
    const loopConfig = config.loops?.find((l) => l.name === loop);
    allow = new Set(loopConfig?.tools ?? DEFAULT_INNER_LOOP_TOOLS);
  }
  return definitions.map((def) => {
    const decl = declared.get(def.name);
    // A contributor's disabledReason (a changed MCP schema) wins over any declaration.
    const enabled =
      !def.disabledReason &&
      (decl?.enabled ?? def.defaultEnabled ?? true) &&
      (allow === undefined || allow.has(def.name));
    return {
      def,
      enabled,
      visible: decl?.visible ?? true,
      restricted: decl?.restricted ?? def.restricted ?? false,
      locked: decl?.locked ?? false,
    };
  });
}
