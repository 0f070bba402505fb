/**
 * The settings file (docs/decisions.md, "Settings hold no keys"). Unknown keys are refused so a typo is a clear
 * start-up error.
 */
import { Type, type Static } from 'typebox';
import { CommandLimitsSettings } from './command-limits.js';
import { McpRegistration } from './mcp.js';

/**
 * A provider's kind. The kernel accepts any lowercase name: which kinds exist is the business of the
 * extension that serves providers (the shipped `providers` knows `anthropic`, `openai`,
 * `openai-compatible` and `openrouter`, and refuses other kinds at its routes and when a model call
 * resolves the provider).
 *
 * @public
 */
export const ProviderKind = Type.String({
  pattern: '^[a-z0-9][a-z0-9._-]*$',
  maxLength: 100,
  description:
    'Provider kind, such as anthropic, openai, openai-compatible or openrouter (checked by the extension serving it)',
});

/** @public */
export const AppProviderSettings = Type.Object(
  {
    id: Type.String({ minLength: 1, pattern: '^[A-Za-z0-9:_.-]+$' }),
    type: ProviderKind,
    name: Type.String({ minLength: 1 }),
    baseUrl: Type.String({ minLength: 1 }),
    defaultModel: Type.Optional(Type.String()),
    /**
     * Name of the environment variable that holds the key; the key itself is never in settings. The
     * daemon's own variables (`AGT_*`: token, owner passphrase) are refused so no settings change can
     * send them to a provider's URL.
     */
    apiKeyEnv: Type.Optional(Type.String({ pattern: '^(?!AGT_)[A-Za-z_][A-Za-z0-9_]*$' })),
    requestDelayMs: Type.Optional(Type.Integer({ minimum: 0 })),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
    maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
  },
  { additionalProperties: false },
);

/**
 * Numeric `limits` of an agent config that have an owner maximum (see {@link AgentCeiling}); the kernel's
 * defaults for the maxima are in `kernel/agents/ceiling.ts` (`sql_timeout_ms` 10 s, ...).
 *
 * @public
 */
export const CAPPED_LIMITS = [
  'sql_timeout_ms',
  'tool_timeout_ms',
  'turn_timeout_ms',
  'lambda_timeout_ms',
  'command_timeout_ms',
  'max_llm_calls_per_turn',
  'max_tool_calls_per_turn',
] as const;

/**
 * The owner's ceiling on what an agent file grants itself: the file's `security` and
 * `limits` can only narrow it. Unset fields take the kernel's safe defaults (no fetch host beyond the
 * public internet, no unsandboxed commands, no compute network, `sql_timeout_ms` at most 10 s, ...).
 *
 * @public
 */
export const AgentCeiling = Type.Object(
  {
    fetchAllowHosts: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 300 }), {
        maxItems: 256,
        description:
          "the hosts an agent's `security.fetch_allow_hosts` may name (`name` covers `name:<any port>`); default none",
      }),
    ),
    allowUnsandboxedCommands: Type.Optional(
      Type.Boolean({
        description: "whether an agent's `security.allow_unsandboxed_commands` may take effect; default false",
      }),
    ),
    computeNetwork: Type.Optional(
      Type.Boolean({ description: "whether an agent's `security.compute_network` may take effect; default false" }),
    ),
    providers: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        maxItems: 256,
        description:
          "provider ids an agent's own `sys_update_config` may move its `model.provider` (or a loop's) to, beside the ones its config already names; default none",
      }),
    ),
    limits: Type.Optional(
      Type.Object(
        Object.fromEntries(CAPPED_LIMITS.map((name) => [name, Type.Optional(Type.Integer({ minimum: 1 }))])) as Record<
          (typeof CAPPED_LIMITS)[number],
          ReturnType<typeof Type.Optional<ReturnType<typeof Type.Integer>>>
        >,
        {
          additionalProperties: false,
          description: 'the largest value each `limits` field of an agent may take',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

/**
 * Top-level agent config fields the owner may unlock for an agent's own `sys_update_config`. All are
 * locked whole but `triggers`, of which only the command targets are (docs/security.md).
 *
 * @public
 */
export const UNLOCKABLE_AGENT_FIELDS = [
  'mcp',
  'security',
  'limits',
  'serving',
  'adapters',
  'providers',
  'ws_connections',
  'triggers',
] as const;

/**
 * USD per million tokens (`cached`: cache-read input; default half of `input`).
 *
 * @public
 */
export const PriceSettings = Type.Object(
  {
    input: Type.Number({ minimum: 0 }),
    output: Type.Number({ minimum: 0 }),
    cached: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
);

/**
 * How long rows of one kind are kept in an agent file (docs/backups.md, "Bounded growth"); both bounds apply.
 *
 * @public
 */
export const RetentionRule = Type.Object(
  {
    maxAgeDays: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, description: 'rows older than this many days are deleted' }),
    ),
    maxRows: Type.Optional(Type.Integer({ minimum: 1, description: 'only the newest this many rows are kept' })),
  },
  { additionalProperties: false },
);

/**
 * Scheduled backups of every loaded and tracked agent (docs/backups.md).
 *
 * @public
 */
export const BackupSettings = Type.Object(
  {
    dir: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'absolute folder of the copies, one sub-folder per agent id (default <data dir>/backups)',
      }),
    ),
    every: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'cron expression (5 fields, or 6 with seconds first), in settings `timezone`',
    }),
    keep: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 10_000,
        description: 'scheduled copies kept per agent, newest first (default 7)',
      }),
    ),
    seal: Type.Optional(Type.Boolean({ description: 'seal each copy to the owner identity (default false)' })),
  },
  { additionalProperties: false },
);

/**
 * OpenTelemetry traces and Prometheus metrics, owned by the telemetry extension (docs/observability.md).
 *
 * @public
 */
export const TelemetrySettings = Type.Object(
  {
    otlpEndpoint: Type.Optional(
      Type.String({
        pattern: '^https?://[^\\s]+$',
        maxLength: 500,
        description: 'OTLP/HTTP traces URL (`http://127.0.0.1:4318/v1/traces`); traces are off without it',
      }),
    ),
    otlpProtocol: Type.Optional(
      Type.Union([Type.Literal('http/protobuf'), Type.Literal('http/json')], {
        description: 'OTLP encoding (default http/protobuf)',
      }),
    ),
    otlpHeaders: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({
              pattern: '^(?![Cc]ontent-)(?![Hh]ost$)[A-Za-z0-9_.-]{1,100}$',
              description: 'the HTTP header (`x-honeycomb-team`, `Authorization`, ...)',
            }),
            /**
             * Name of the environment variable that holds the value; the value itself is never in settings
             * (the daemon's own `AGT_*` variables are refused, as for a provider's `apiKeyEnv`). Without it the
             * value is the one sealed with `PUT /metrics/otlp-headers/{name}`.
             */
            valueEnv: Type.Optional(Type.String({ pattern: '^(?!AGT_)[A-Za-z_][A-Za-z0-9_]*$', maxLength: 200 })),
          },
          { additionalProperties: false },
        ),
        {
          maxItems: 20,
          description:
            "headers sent with every export (a hosted collector's key), each value from the daemon's environment (`valueEnv`) or sealed by the telemetry extension",
        },
      ),
    ),
    captureContent: Type.Optional(
      Type.Boolean({ description: 'record message and tool contents on spans (default false)' }),
    ),
    metrics: Type.Optional(
      Type.Boolean({ description: 'count for GET /metrics from start-up (default: from the first scrape)' }),
    ),
  },
  { additionalProperties: false },
);

/**
 * Size and growth of agent files (docs/backups.md, "Bounded growth").
 *
 * @public
 */
export const StorageSettings = Type.Object(
  {
    quotaBytes: Type.Optional(
      Type.Integer({
        minimum: 65_536,
        description:
          "the most an agent file may grow to by the agent's own writes (SQL tools, stored files); default none",
      }),
    ),
    agentQuotas: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 128 }), Type.Integer({ minimum: 65_536 }), {
        description: 'per agent id: replaces quotaBytes',
      }),
    ),
    walMaxBytes: Type.Optional(
      Type.Integer({
        minimum: 262_144,
        description: "the WAL's bound: SQLite's journal_size_limit and the automatic checkpoint's size (default 4 MiB)",
      }),
    ),
    maintenanceSeconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 86_400,
        description: 'how often checkpoints and retention run (default 60)',
      }),
    ),
    retention: Type.Optional(
      Type.Object(
        {
          logs: Type.Optional(RetentionRule),
          events: Type.Optional(RetentionRule),
          messages: Type.Optional(RetentionRule),
          umbilical: Type.Optional(RetentionRule),
        },
        {
          additionalProperties: false,
          description:
            'logs: agt_logs; events: agt_audit records; messages: finished agt_inbox / agt_outbox rows; umbilical: the in-memory replay window (GET /agents/{id}/umbilical/events)',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

/**
 * The connection budget of each HTTP server of the daemon (docs/security.md, "Connection limits"): the
 * main API, the mesh server and any server an extension opens each have a budget of this size of their
 * own, so a flood on one never takes another's clients.
 *
 * @public
 */
export const ServerSettings = Type.Object(
  {
    maxConnections: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        description:
          "connections one server holds open at once; more are closed as they are accepted (default: an eighth of the process's open-file limit, at most 4096)",
      }),
    ),
    maxConnectionsPerAddress: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        description:
          'connections one server holds open at once from one client address (an IPv6 client by its /64); more are closed at once (default: a quarter of maxConnections)',
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * Several daemons as one on NATS JetStream, owned by the `fleet` extension (docs/fleet.md). Secrets are named,
 * never written here: an environment variable's name, or the path of an nkey seed file.
 *
 * @beta
 */
export const FleetSettings = Type.Object(
  {
    servers: Type.Array(Type.String({ pattern: '^(nats|tls|ws|wss)://[^\\s]+$', maxLength: 500 }), {
      minItems: 1,
      maxItems: 64,
      description: 'NATS server URLs of the fleet (`nats://10.0.0.5:4222`); the client fails over between them',
    }),
    credentials: Type.Optional(
      Type.Object(
        {
          user: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'NATS user name' })),
          passwordEnv: Type.Optional(
            Type.String({
              pattern: '^(?!AGT_)[A-Za-z_][A-Za-z0-9_]*$',
              description: "environment variable holding the user's password",
            }),
          ),
          tokenEnv: Type.Optional(
            Type.String({
              pattern: '^(?!AGT_)[A-Za-z_][A-Za-z0-9_]*$',
              description: 'environment variable holding a NATS token',
            }),
          ),
          nkeySeedFile: Type.Optional(
            Type.String({ minLength: 1, maxLength: 1000, description: 'absolute path of an nkey seed file' }),
          ),
        },
        { additionalProperties: false, description: 'how this daemon logs in to NATS (default: no credentials)' },
      ),
    ),
    name: Type.String({
      pattern: '^[A-Za-z0-9_-]{1,64}$',
      description: "the fleet's name: daemons with the same name (and NATS) are one fleet",
    }),
    daemonName: Type.String({
      pattern: '^[A-Za-z0-9_-]{1,64}$',
      description: "this daemon's name in the fleet, unique in it (`GET /agents` shows it beside the agents it runs)",
    }),
    daemonDids: Type.Optional(
      Type.Array(Type.String({ pattern: '^did:key:z[1-9A-HJ-NP-Za-km-z]{1,200}$' }), {
        maxItems: 1000,
        description:
          "the runtime keys (`GET /fleet` `did`) of the fleet's daemons: forwarded requests signed by any other key are refused (default: any daemon holding the fleet's NATS credentials)",
      }),
    ),
  },
  { additionalProperties: false },
);

/** @public */
export const SettingsSchema = Type.Object(
  {
    pricing: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 300 }), PriceSettings, {
        description:
          "prices by `<provider id>/<model>` (longest model prefix wins) or `<provider id>` (that provider's default), over the shipped table (docs/costs.md)",
      }),
    ),
    budget: Type.Optional(
      Type.Object(
        { day_usd: Type.Optional(Type.Number({ minimum: 0 })), month_usd: Type.Optional(Type.Number({ minimum: 0 })) },
        {
          additionalProperties: false,
          description: "the whole daemon's spend limits; also the most an agent file's own budget may ask",
        },
      ),
    ),
    timezone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: "IANA time zone of budget days and months (default: the machine's)",
      }),
    ),
    agentsFolder: Type.Optional(Type.String({ minLength: 1 })),
    defaultTemplateId: Type.Optional(Type.String({ minLength: 1 })),
    providers: Type.Optional(Type.Array(AppProviderSettings)),
    trackedFolders: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    maxScanDepth: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 32,
        description: 'folder levels below each tracked folder that scans and the watcher descend into (default 5)',
      }),
    ),
    mcpServers: Type.Optional(
      Type.Array(McpRegistration, {
        maxItems: 200,
        description: 'MCP server registrations, owned by the mcp extension',
      }),
    ),
    mcpServer: Type.Optional(
      Type.Object(
        {
          agents: Type.Optional(
            Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
              maxItems: 1000,
              description:
                'agents (by id, handle or name; handles and names in any case) that `/mcp/server` (agt as an MCP server) exposes; `"*"`: every loaded agent; default none (docs/mcp.md)',
            }),
          ),
        },
        { additionalProperties: false, description: 'agt as an MCP server, owned by the mcp extension' },
      ),
    ),
    computeHostAgents: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
        maxItems: 1000,
        description:
          'agent ids the owner allows to run commands in the `host` compute tier (no container), owned by the compute extension',
      }),
    ),
    /** The owner ceiling of every agent (docs/security.md, "The owner's ceiling"). */
    agentCeiling: Type.Optional(AgentCeiling),
    agentCeilings: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 128 }), AgentCeiling, {
        description: 'per agent id: replaces the fields of `agentCeiling` it sets (`limits` key by key)',
      }),
    ),
    agentConfigUnlocks: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1, maxLength: 128 }),
        Type.Array(Type.Union(UNLOCKABLE_AGENT_FIELDS.map((f) => Type.Literal(f))), {
          maxItems: UNLOCKABLE_AGENT_FIELDS.length,
        }),
        {
          description:
            "per agent id: owner-locked config fields that agent's own `sys_update_config` may change (the ceiling still caps them)",
        },
      ),
    ),
    commandLimits: Type.Optional(CommandLimitsSettings),
    sqlMaxProcesses: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 256,
        description:
          'agent SQL child processes that may exist at once across all agents (default max(2, cores)); calls beyond wait, and the wait counts in their sql_timeout_ms',
      }),
    ),
    backups: Type.Optional(BackupSettings),
    telemetry: Type.Optional(TelemetrySettings),
    fleet: Type.Optional(FleetSettings),
    storage: Type.Optional(StorageSettings),
    server: Type.Optional(ServerSettings),
    memory: Type.Optional(
      Type.Object(
        {
          embeddings: Type.Optional(
            Type.Object(
              {
                provider: Type.String({
                  minLength: 1,
                  maxLength: 200,
                  description:
                    "a provider id of `providers` (or of the agent's own) whose server speaks OpenAI-format `/v1/embeddings`",
                }),
                model: Type.String({ minLength: 1, maxLength: 200 }),
                dimensions: Type.Integer({
                  minimum: 1,
                  maximum: 4096,
                  description: "width of the model's vectors (sent as `dimensions` to models that can shorten theirs)",
                }),
              },
              { additionalProperties: false },
            ),
          ),
        },
        {
          additionalProperties: false,
          description: 'long-term memory of agents (docs/memory.md); without `embeddings`, full-text search only',
        },
      ),
    ),
    meshServerEnabled: Type.Optional(Type.Boolean()),
    meshLan: Type.Optional(Type.Boolean()),
    meshPort: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
    meshPeers: Type.Optional(
      Type.Array(Type.String({ pattern: '^https?://[^\\s/?#]+/?$', maxLength: 300 }), {
        maxItems: 256,
        description:
          'mesh servers of other daemons, by base URL (`http://10.0.0.5:7295`), listed by `GET /network/peers` beside the ones mDNS finds',
      }),
    ),
  },
  { additionalProperties: false },
);

/** @public */
export type Settings = Static<typeof SettingsSchema>;

/**
 * `maxScanDepth` when the settings do not say.
 *
 * @public
 */
export const DEFAULT_MAX_SCAN_DEPTH = 5;
/** @public */
export type AppProviderSettings = Static<typeof AppProviderSettings>;
/** @public */
export type AgentCeiling = Static<typeof AgentCeiling>;
/** @public */
export type PriceSettings = Static<typeof PriceSettings>;
/** @public */
export type BackupSettings = Static<typeof BackupSettings>;
/** @public */
export type TelemetrySettings = Static<typeof TelemetrySettings>;
/** @beta */
export type FleetSettings = Static<typeof FleetSettings>;
/** @public */
export type StorageSettings = Static<typeof StorageSettings>;
/** @public */
export type ServerSettings = Static<typeof ServerSettings>;
/** @public */
export type RetentionRule = Static<typeof RetentionRule>;
/** @public */
export type UnlockableAgentField = (typeof UNLOCKABLE_AGENT_FIELDS)[number];
