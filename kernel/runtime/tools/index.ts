/**
 * The built-in tools (docs/runtime.md#built-in-tools; their names are part of the agent format). Each is a {@link
 * ToolDefinition} with a JSON input schema; `run` finds the calling agent's runtime by id, so one list serves every
 * agent (and `GET /agents/{id}/tools`). Undeclared tools are enabled by default except `sys_update_config`;
 * `sys_fetch`, `msg_send` and `sys_update_config` are marked notable for the review summary.
 */
import type { ToolDefinition } from '@agt/contracts';
import { dbTools } from './db-tools.js';
import type { RuntimeLookup } from './define.js';
import { fsTools } from './fs-tools.js';
import { hilTools } from './hil-tools.js';
import { loopTools } from './loop-tools.js';
import { memoryTools } from './memory-tools.js';
import { msgTools } from './msg-tools.js';
import { sysTools } from './sys-tools.js';

export type { RuntimeLookup } from './define.js';

export function builtinTools(lookup: RuntimeLookup): ToolDefinition[] {
  // Sorted by code unit, not `localeCompare`: the names are lower-case letters and `_`, which both
  // orders sort alike, and the first `localeCompare` in a process sets up ICU's collator (~8 ms of
  // the daemon's start).
  return [
    ...hilTools(lookup),
    ...fsTools(lookup),
    ...dbTools(lookup),
    ...msgTools(lookup),
    ...sysTools(lookup),
    ...loopTools(lookup),
    ...memoryTools(lookup),
  ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
