/**
 * The agent config as TypeBox schemas: the validation of agent files and config writes, and
 * the OpenAPI document. The package declares the same config as types (`AgentConfig`, ... in
 * contracts/agent-config.ts, what an extension reads and writes); the checks at the end of this file fail
 * the type check when the two drift. Objects left open (`security`, `limits`, `context`, ...) accept extra
 * keys; secret values never belong in config (credentials are sealed separately).
 */
import { Type, type Static } from 'typebox';
import type * as Contract from '@agt/contracts';

export const MAX_AGENT_NAME_LENGTH = 64;

/**
 * An agent name: 1-64 characters, no control characters (C0, DEL, C1), no line or paragraph separators
 * and no bidirectional overrides or isolates, no leading or trailing white space, at least one letter or
 * digit (any script).
 */
export const AGENT_NAME_PATTERN =
  '^(?!\\s)(?=.*[\\p{L}\\p{N}])[^\\p{Cc}\\u2028\\u2029\\u202A-\\u202E\\u2066-\\u2069]{1,64}(?<!\\s)$';

/** The one rule for agent names (kernel/http-api/names.ts explains a refusal). */
export const AgentName = Type.String({
  minLength: 1,
  maxLength: MAX_AGENT_NAME_LENGTH,
  pattern: AGENT_NAME_PATTERN,
  description: '1-64 characters, no control characters, no leading or trailing spaces, at least one letter or digit',
});

const Open = (props: Parameters<typeof Type.Object>[0] = {}) => Type.Object(props, { additionalProperties: true });

export const KeyValue = Type.Object({ key: Type.String(), value: Type.String() }, { additionalProperties: false });

export const ModelConfig = Type.Object(
  {
    provider: Type.String({ minLength: 1 }),
    model_id: Type.String({ minLength: 1 }),
    temperature: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
    max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    top_p: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
    reasoning: Type.Optional(Open()),
    multimodal: Type.Optional(
      Type.Object({
        image: Type.Optional(Type.Boolean()),
        audio: Type.Optional(Type.Boolean()),
        video: Type.Optional(Type.Boolean()),
      }),
    ),
    params: Type.Optional(Type.Array(KeyValue)),
    provider_params: Type.Optional(Open()),
    compact_threshold: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  },
  { additionalProperties: false },
);

export const ToolDeclaration = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    enabled: Type.Boolean(),
    visible: Type.Optional(Type.Boolean()),
    restricted: Type.Optional(Type.Boolean()),
    locked: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const TRIGGER_TYPES = [
  'on_startup',
  'on_inbox',
  'on_outbox',
  'on_file_change',
  'on_chat',
  'on_timer',
  'on_tool_call',
  'on_task_create',
  'on_task_complete',
  'on_logs',
  'on_llm_call',
  'on_mcp_resource',
] as const;
type TriggerType = (typeof TRIGGER_TYPES)[number];

export const LOOP_NAME_PATTERN = '^[a-z0-9][a-z0-9_-]{0,31}$';

export const TriggerTarget = Type.Object(
  {
    scope: Type.Union([Type.Literal('agent'), Type.Literal('system')]),
    lambda: Type.Optional(Type.String({ pattern: '^[^:]+:[A-Za-z_$][A-Za-z0-9_$]*$' })),
    command: Type.Optional(Type.String({ minLength: 1 })),
    warm: Type.Optional(Type.Boolean()),
    filter: Type.Optional(Open()),
    debounce_ms: Type.Optional(Type.Integer({ minimum: 0 })),
    interval_ms: Type.Optional(Type.Integer({ minimum: 0 })),
    batch_ms: Type.Optional(Type.Integer({ minimum: 0 })),
    batch_count: Type.Optional(Type.Integer({ minimum: 1 })),
    locked: Type.Optional(Type.Boolean()),
    loop: Type.Optional(Type.String({ pattern: LOOP_NAME_PATTERN })),
  },
  { additionalProperties: false },
);

export const TriggerConfig = Type.Object(
  { enabled: Type.Boolean(), targets: Type.Array(TriggerTarget) },
  { additionalProperties: false },
);

/** Keys are trigger types; each is optional and an unknown key is refused. */
export const Triggers = Type.Object(
  Object.fromEntries(TRIGGER_TYPES.map((t) => [t, Type.Optional(TriggerConfig)])) as Record<
    TriggerType,
    ReturnType<typeof Type.Optional<typeof TriggerConfig>>
  >,
  { additionalProperties: false },
);

export const McpServerConfig = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    transport: Type.Union([Type.Literal('stdio'), Type.Literal('http')]),
    command: Type.Optional(Type.String()),
    args: Type.Optional(Type.Array(Type.String())),
    url: Type.Optional(Type.String()),
    oauth: Type.Optional(Type.Boolean()),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    header_env: Type.Optional(Type.Array(Open())),
    bearer_token_env_var: Type.Optional(Type.String()),
    env: Type.Optional(Type.Record(Type.String(), Type.String())),
    env_keys: Type.Optional(Type.Array(Type.String())),
    env_schema: Type.Optional(Type.Array(Open())),
    npm_package: Type.Optional(Type.String()),
    pypi_package: Type.Optional(Type.String()),
    source: Type.Optional(Type.String()),
    available_tools: Type.Optional(Type.Array(Open())),
    tool_call_timeout_ms: Type.Optional(Type.Integer({ minimum: 1 })),
    restricted: Type.Optional(Type.Boolean()),
    run_location: Type.Optional(Type.Union([Type.Literal('host'), Type.Literal('shared')])),
    subscribe: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { maxItems: 100 })),
    credential_files: Type.Optional(
      Type.Array(
        Type.Object({ path: Type.String(), required: Type.Boolean(), write_back: Type.Optional(Type.Boolean()) }),
      ),
    ),
    new_tools_restricted: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const AdapterInstanceConfig = Type.Object(
  {
    enabled: Type.Boolean(),
    config: Type.Optional(Open()),
    policy: Type.Optional(Open()),
    limits: Type.Optional(Type.Object({ max_attachment_size: Type.Optional(Type.Integer({ minimum: 0 })) })),
  },
  { additionalProperties: false },
);

export const AgentProviderConfig = Type.Object(
  {
    id: Type.String({ pattern: '^([a-z0-9-]+|custom:[A-Za-z0-9_.-]+)$' }),
    type: Type.Union([
      Type.Literal('anthropic'),
      Type.Literal('openai'),
      Type.Literal('openai-compatible'),
      Type.Literal('openrouter'),
    ]),
    name: Type.String({ minLength: 1 }),
    baseUrl: Type.String({ minLength: 1 }),
    preset: Type.Optional(Type.String()),
    defaultModel: Type.Optional(Type.String()),
    params: Type.Optional(Type.Array(KeyValue)),
    requestDelayMs: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);

export const LoopConfig = Type.Object(
  {
    name: Type.String({ pattern: LOOP_NAME_PATTERN }),
    goal: Type.String({ minLength: 1 }),
    enabled: Type.Boolean(),
    autostart: Type.Optional(Type.Boolean()),
    autonomous: Type.Optional(Type.Boolean()),
    model: Type.Optional(Type.Partial(ModelConfig)),
    compact_threshold: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    tools: Type.Optional(Type.Array(Type.String())),
  },
  { additionalProperties: false },
);

export const DisplayState = Type.Union([
  Type.Literal('active'),
  Type.Literal('idle'),
  Type.Literal('hibernate'),
  Type.Literal('suspended'),
  Type.Literal('off'),
]);

export const AgentConfigSchema = Type.Object(
  {
    agt_version: Type.Literal('0.2'),
    id: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:-]+$' }),
    name: AgentName,
    description: Type.String(),
    handle: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' })),
    icon: Type.Optional(Type.String()),
    state: DisplayState,
    autonomous: Type.Boolean(),
    autostart: Type.Optional(Type.Boolean()),
    model: ModelConfig,
    instructions: Type.String(),
    context: Open({
      compact_threshold: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
      audit: Type.Optional(Type.Unknown()),
      dynamic_instructions: Type.Optional(Type.Unknown()),
    }),
    tools: Type.Array(ToolDeclaration),
    triggers: Triggers,
    security: Open({
      fetch_allow_hosts: Type.Optional(
        Type.Array(Type.String({ minLength: 1, maxLength: 300 }), {
          maxItems: 256,
          description:
            'hosts `sys_fetch` may reach although they are (or resolve to) loopback, private or link-local addresses: `name`, `name:port`, `10.0.0.5:8080`, `[fd00::1]:443` (owner-only, like all of `security`)',
        }),
      ),
    }),
    limits: Open({
      max_llm_calls_per_turn: Type.Optional(Type.Integer({ minimum: 1 })),
      max_tool_calls_per_turn: Type.Optional(Type.Integer({ minimum: 0 })),
      turn_timeout_ms: Type.Optional(Type.Integer({ minimum: 1 })),
      tool_timeout_ms: Type.Optional(Type.Integer({ minimum: 1 })),
      sql_timeout_ms: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: 60_000,
          description:
            "time limit of one `db_query` / `db_execute` statement (default 2000); past it the statement's process is killed and nothing it did is kept",
        }),
      ),
    }),
    budget: Type.Optional(
      Type.Object(
        {
          turn_tokens: Type.Optional(
            Type.Integer({ minimum: 1, description: 'input + output tokens one turn may use' }),
          ),
          day_tokens: Type.Optional(
            Type.Integer({ minimum: 1, description: 'tokens per day (owner time zone, settings `timezone`)' }),
          ),
          day_usd: Type.Optional(
            Type.Number({ minimum: 0, description: "USD per day; capped at the owner's settings `budget.day_usd`" }),
          ),
          month_usd: Type.Optional(
            Type.Number({
              minimum: 0,
              description: "USD per calendar month; capped at the owner's settings `budget.month_usd`",
            }),
          ),
          on_exceeded: Type.Optional(
            Type.Union([Type.Literal('ask'), Type.Literal('fail')], {
              description: 'ask (default): an owner task of kind budget; fail: the turn ends budget_exceeded',
            }),
          ),
        },
        { additionalProperties: false, description: 'spend limits enforced before every model call (docs/costs.md)' },
      ),
    ),
    memory: Type.Optional(
      Type.Object(
        {
          recall: Type.Optional(
            Type.Boolean({
              description: "give the model the memories relevant to each turn's input before the turn (default true)",
            }),
          ),
          recall_tokens: Type.Optional(
            Type.Integer({
              minimum: 0,
              maximum: 32_000,
              description:
                "the most tokens (chars / 4) recalled memories may take in a turn's context (default 600; 0: no recall)",
            }),
          ),
          consolidation: Type.Optional(
            Type.Object(
              {
                enabled: Type.Optional(Type.Boolean({ description: 'run consolidation on schedule (default false)' })),
                every_ms: Type.Optional(
                  Type.Integer({
                    minimum: 60_000,
                    maximum: 366 * 24 * 60 * 60 * 1000,
                    description: 'run every this many ms (1 minute to 366 days)',
                  }),
                ),
                cron: Type.Optional(
                  Type.String({
                    minLength: 1,
                    maxLength: 200,
                    description: 'run on this cron expression (server time zone)',
                  }),
                ),
                max_memories_per_run: Type.Optional(
                  Type.Integer({
                    minimum: 2,
                    maximum: 200,
                    description: 'memories the model sees per run (default 50)',
                  }),
                ),
              },
              {
                additionalProperties: false,
                description:
                  "merge duplicates and update stale facts on the agent's own model, with a changelog (docs/memory.md)",
              },
            ),
          ),
        },
        { additionalProperties: false, description: 'long-term memory (docs/memory.md)' },
      ),
    ),
    messaging: Open({
      mode: Type.Optional(
        Type.Union([Type.Literal('proactive'), Type.Literal('respond_only'), Type.Literal('listen_only')]),
      ),
    }),
    mcp: Type.Optional(Type.Object({ servers: Type.Array(McpServerConfig) }, { additionalProperties: false })),
    adapters: Type.Optional(Type.Record(Type.String(), AdapterInstanceConfig)),
    providers: Type.Optional(Type.Array(AgentProviderConfig)),
    loops: Type.Optional(Type.Array(LoopConfig)),
    ws_connections: Type.Optional(Type.Array(Open())),
    serving: Type.Optional(Open()),
    umbilical: Type.Optional(Open({ log: Type.Optional(Open({ enabled: Type.Optional(Type.Boolean()) })) })),
    locked_fields: Type.Optional(Type.Array(Type.String())),
    metadata: Open({
      created_at: Type.Optional(Type.Union([Type.String(), Type.Integer()])),
      updated_at: Type.Optional(Type.Union([Type.String(), Type.Integer()])),
      author: Type.Optional(Type.String()),
      tags: Type.Optional(Type.Array(Type.String())),
      version: Type.Optional(Type.String()),
    }),
  },
  { additionalProperties: false },
);

export type AgentConfig = Static<typeof AgentConfigSchema>;
export type ModelConfig = Static<typeof ModelConfig>;
export type TriggerTarget = Static<typeof TriggerTarget>;
export type TriggerConfig = Static<typeof TriggerConfig>;
export type LoopConfig = Static<typeof LoopConfig>;
export type McpServerConfig = Static<typeof McpServerConfig>;
export type AgentProviderConfig = Static<typeof AgentProviderConfig>;
export type ToolDeclaration = Static<typeof ToolDeclaration>;

/** Whether A and B accept the same values (each assignable to the other). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type AllTrue<T extends true[]> = T;
/** The schema validates what the package's types declare: a drift on either side fails the type check here. */
export type SameAsContract = AllTrue<
  [
    Same<AgentConfig, Contract.AgentConfig>,
    Same<ModelConfig, Contract.ModelConfig>,
    Same<TriggerType, Contract.TriggerType>,
    Same<TriggerTarget, Contract.TriggerTarget>,
    Same<TriggerConfig, Contract.TriggerConfig>,
    Same<LoopConfig, Contract.LoopConfig>,
    Same<McpServerConfig, Contract.McpServerConfig>,
    Same<AgentProviderConfig, Contract.AgentProviderConfig>,
    Same<ToolDeclaration, Contract.ToolDeclaration>,
  ]
>;
