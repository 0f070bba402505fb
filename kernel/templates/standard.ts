/**
 * The built-in `standard` template: a complete AgentConfig apart from `id` and `name`, which the
 * create-agent route fills in. Its model comes from the settings' first provider (else `local`), so a
 * fresh install creates agents that talk to whatever provider the owner configured.
 */
import type { Settings } from '@agt/contracts';
import type { TemplateConfig } from './types.js';

export const STANDARD_TEMPLATE_ID = 'standard';

/** The built-in tools. Those that reach outside the agent or destroy data need owner approval. */
const BUILTIN_TOOLS: Array<[name: string, restricted: boolean]> = [
  ['ask', false],
  ['say', false],
  ['fs_read', false],
  ['fs_write', false],
  ['fs_list', false],
  ['fs_delete', true],
  ['db_query', false],
  ['db_execute', false],
  ['msg_send', false],
  ['msg_list', false],
  ['msg_read', false],
  ['sys_get_meta', false],
  ['sys_set_meta', false],
  ['sys_delete_meta', false],
  ['sys_set_timer', false],
  ['sys_list_timers', false],
  ['sys_delete_timer', false],
  ['sys_set_state', false],
  ['sys_get_config', false],
  ['sys_update_config', true],
  ['sys_fetch', true],
  ['loop_send', false],
  ['loop_list', false],
  ['loop_compact', false],
  ['loop_clear', true],
];

const DEFAULT_MODEL = 'llama3.2';

const INSTRUCTIONS = [
  'You are a helpful, careful assistant running as an agent in the agt runtime.',
  'Answer the owner directly and concisely. Use your tools when they help: keep notes in your files,',
  'set timers for follow-ups, and ask the owner (the `ask` tool) when a request is ambiguous.',
  'Never invent facts; say when you do not know.',
].join(' ');

export function standardTemplate(settings: Readonly<Settings>): TemplateConfig {
  const provider = settings.providers?.[0];
  const agentTarget = () => ({ enabled: true, targets: [{ scope: 'agent' as const }] });
  return {
    agt_version: '0.2',
    description: 'A general-purpose assistant that chats with its owner and answers its inbox.',
    state: 'active',
    autonomous: false,
    autostart: false,
    model: {
      provider: provider?.id ?? 'local',
      model_id: provider?.defaultModel ?? DEFAULT_MODEL,
      temperature: null,
      max_tokens: null,
    },
    instructions: INSTRUCTIONS,
    context: { compact_threshold: null },
    tools: BUILTIN_TOOLS.map(([name, restricted]) => ({
      name,
      enabled: true,
      visible: true,
      restricted,
      locked: false,
    })),
    triggers: { on_chat: agentTarget(), on_inbox: agentTarget(), on_timer: agentTarget() },
    security: {},
    limits: {
      max_llm_calls_per_turn: 25,
      max_tool_calls_per_turn: 50,
      turn_timeout_ms: 600_000,
      tool_timeout_ms: 120_000,
    },
    messaging: { mode: 'respond_only' },
    metadata: { tags: [], version: '1.0.0' },
  };
}
