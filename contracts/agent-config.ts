/**
 * The agent config (an agent file's `config`) as an extension reads it (`AgentView.config`) and writes it
 * (`ctx.agents.updateConfig`): types only. The schema that validates it is the kernel's
 * (kernel/agents/config-schema.ts), which checks at compile time that it validates exactly these types.
 * Object types rather than interfaces: a config reads as a `Record<string, unknown>` too.
 * Sections the daemon leaves open (`context`, `security`, `limits`, ...) are records of their own keys beside
 * the documented ones; secret values
 * never belong in a config (credentials are sealed separately).
 */

/**
 * The model an agent (or one of its loops) calls.
 * @public
 */
export type ModelConfig = {
  provider: string;
  model_id: string;
  temperature?: number | null;
  max_tokens?: number | null;
  top_p?: number | null;
  reasoning?: Record<string, unknown>;
  multimodal?: { image?: boolean; audio?: boolean; video?: boolean };
  params?: Array<{ key: string; value: string }>;
  provider_params?: Record<string, unknown>;
  compact_threshold?: number | null;
};

/**
 * One tool the agent has, and how it may use it.
 * @public
 */
export type ToolDeclaration = {
  name: string;
  enabled: boolean;
  visible?: boolean;
  restricted?: boolean;
  locked?: boolean;
};

/**
 * What starts a trigger.
 * @public
 */
export type TriggerType =
  | 'on_startup'
  | 'on_inbox'
  | 'on_outbox'
  | 'on_file_change'
  | 'on_chat'
  | 'on_timer'
  | 'on_tool_call'
  | 'on_task_create'
  | 'on_task_complete'
  | 'on_logs'
  | 'on_llm_call'
  | 'on_mcp_resource';

/**
 * What a trigger runs: a lambda (`file:export`), a command, or a turn of a loop.
 * @public
 */
export type TriggerTarget = {
  scope: 'agent' | 'system';
  lambda?: string;
  command?: string;
  warm?: boolean;
  filter?: Record<string, unknown>;
  debounce_ms?: number;
  interval_ms?: number;
  batch_ms?: number;
  batch_count?: number;
  locked?: boolean;
  loop?: string;
};

/**
 * One trigger type's targets.
 * @public
 */
export type TriggerConfig = {
  enabled: boolean;
  targets: TriggerTarget[];
};

/**
 * An MCP server the agent connects to.
 * @public
 */
export type McpServerConfig = {
  name: string;
  transport: 'stdio' | 'http';
  command?: string;
  args?: string[];
  url?: string;
  oauth?: boolean;
  headers?: Record<string, string>;
  header_env?: Record<string, unknown>[];
  bearer_token_env_var?: string;
  env?: Record<string, string>;
  env_keys?: string[];
  env_schema?: Record<string, unknown>[];
  npm_package?: string;
  pypi_package?: string;
  source?: string;
  available_tools?: Record<string, unknown>[];
  tool_call_timeout_ms?: number;
  restricted?: boolean;
  run_location?: 'host' | 'shared';
  /**
   * Resource URIs to subscribe to on this server (`resources/subscribe`, when it offers subscriptions):
   * each `notifications/resources/updated` fires the agent's `on_mcp_resource` trigger (docs/mcp.md).
   */
  subscribe?: string[];
  credential_files?: Array<{ path: string; required: boolean; write_back?: boolean }>;
  new_tools_restricted?: boolean;
};

/**
 * A model provider the agent declares for itself.
 * @public
 */
export type AgentProviderConfig = {
  id: string;
  type: 'anthropic' | 'openai' | 'openai-compatible' | 'openrouter';
  name: string;
  baseUrl: string;
  preset?: string;
  defaultModel?: string;
  params?: Array<{ key: string; value: string }>;
  requestDelayMs?: number;
};

/**
 * A named loop of the agent (its own goal, model and tools).
 * @public
 */
export type LoopConfig = {
  name: string;
  goal: string;
  enabled: boolean;
  autostart?: boolean;
  autonomous?: boolean;
  model?: Partial<ModelConfig>;
  compact_threshold?: number | null;
  tools?: string[];
};

/**
 * An agent's config, as its agent file holds it.
 * @public
 */
export type AgentConfig = {
  agt_version: '0.2';
  id: string;
  name: string;
  description: string;
  handle?: string;
  icon?: string;
  state: 'active' | 'idle' | 'hibernate' | 'suspended' | 'off';
  autonomous: boolean;
  autostart?: boolean;
  model: ModelConfig;
  instructions: string;
  context: Record<string, unknown>;
  tools: ToolDeclaration[];
  triggers: { [type in TriggerType]?: TriggerConfig };
  security: Record<string, unknown>;
  limits: Record<string, unknown>;
  budget?: {
    turn_tokens?: number;
    day_tokens?: number;
    day_usd?: number;
    month_usd?: number;
    on_exceeded?: 'ask' | 'fail';
  };
  /** Long-term memory: recall before each turn (default on) within `recall_tokens` (default 600; 0: none). */
  memory?: {
    recall?: boolean;
    recall_tokens?: number;
    /**
     * Consolidation on the agent's own model (off by default): `every_ms` or `cron`, at most `max_memories_per_run`
     * (default 50).
     */
    consolidation?: { enabled?: boolean; every_ms?: number; cron?: string; max_memories_per_run?: number };
  };
  messaging: Record<string, unknown>;
  mcp?: { servers: McpServerConfig[] };
  adapters?: Record<
    string,
    {
      enabled: boolean;
      config?: Record<string, unknown>;
      policy?: Record<string, unknown>;
      limits?: { max_attachment_size?: number };
    }
  >;
  providers?: AgentProviderConfig[];
  loops?: LoopConfig[];
  ws_connections?: Record<string, unknown>[];
  serving?: Record<string, unknown>;
  umbilical?: Record<string, unknown>;
  locked_fields?: string[];
  metadata: Record<string, unknown>;
};
