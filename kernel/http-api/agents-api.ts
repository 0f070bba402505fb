/**
 * Wire shapes of the Agents route group (docs/agent-files.md): the TypeBox schemas the routes validate
 * and serialize with, and the types clients and extensions code against.
 */
import { Type, type Static } from 'typebox';
import { AgentConfigSchema } from '../agents/config-schema.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
/**
 * A nullable string as `type: ['string', 'null']` (JSON Schema and OpenAPI 3.1) rather than `anyOf`: the
 * response serializer writes it with a type check instead of trying each branch. Used in the shapes of
 * the hot routes (status, list).
 */
const NullableString = (options: { description?: string } = {}) =>
  Type.Unsafe<string | null>({ ...options, type: ['string', 'null'] });

export const AgentSummary = Type.Object({
  id: Type.String(),
  filePath: NullableString(),
  name: Type.String(),
  handle: Type.Optional(Type.String()),
  autostart: Type.Boolean(),
  runtimeState: Type.String({
    description:
      'executor state of main (`idle`, `thinking`, `tool_use`, `awaiting_approval`, `awaiting_ask`, `suspended`, `error`, `stopped`), or the display state when no executor runs',
  }),
  displayState: Type.String({
    description: 'display (fleet-map) state: `active`, `idle`, `hibernate`, `suspended`, `off`',
  }),
  daemon: Type.Optional(
    Type.String({
      description:
        'for an agent another daemon of the fleet runs (docs/fleet.md): that daemon; its states are then `remote` (its own routes answer through this daemon)',
    }),
  ),
});

/** One owner cap applied to an agent file's own config (the owner's settings are the ceiling). */
export const CappedField = Type.Object({
  field: Type.String({ description: 'dotted path: `limits.sql_timeout_ms`, `security.fetch_allow_hosts`' }),
  asked: Type.Unknown({ description: 'what the file says' }),
  applied: Type.Unknown({ description: 'what applies (the owner ceiling); null: nothing of it applies' }),
});

/** One part of an agent config an extension's check refuses (`contracts/points.ts`, `agentConfigChecks`). */
export const RefusedField = Type.Object({ field: Type.String(), reason: Type.String() });

export const AgentRef = Type.Object({
  id: Type.String(),
  filePath: Nullable(Type.String()),
  config: AgentConfigSchema,
  capped: Type.Optional(
    Type.Array(CappedField, {
      description: "what the owner's ceiling narrowed in the file's `security` and `limits` (empty: nothing)",
    }),
  ),
  refused: Type.Optional(
    Type.Array(RefusedField, { description: "parts of the config the owner's settings refuse; they do not apply" }),
  ),
});

export const AgentStatus = Type.Object({
  id: Type.String(),
  filePath: NullableString(),
  name: Type.String(),
  handle: Type.Optional(Type.String()),
  autostart: Type.Boolean(),
  runtimeState: Type.String({ description: 'executor state of main, or the display state when no executor runs' }),
  targetState: NullableString(),
  loopCount: Type.Integer({ description: "persisted rows of main's loop stream" }),
  degraded: Type.Optional(Type.String()),
  storage: Type.Optional(
    Type.Object(
      {
        fileBytes: Type.Integer({ description: 'bytes of the .agt file on disk' }),
        walBytes: Type.Integer({ description: 'bytes of its -wal file (0 when none)' }),
        quotaBytes: Nullable(
          Type.Integer({
            description: "the owner's size quota of the agent's own writes (settings storage), null: none",
          }),
        ),
        tables: Type.Record(Type.String(), Type.Integer(), {
          description: 'rows per table (agt_* and local_*), counted at most every few seconds',
        }),
      },
      { description: 'the agent file on disk (docs/backups.md)' },
    ),
  ),
});

/** The 409 `ambiguous_agent` body's `candidates` items. */
export const AgentCandidate = Type.Object({
  name: Type.String(),
  handle: Nullable(Type.String()),
  filePath: Nullable(Type.String()),
  id: Type.String(),
});

export const ToolEntry = Type.Object({
  name: Type.String(),
  enabled: Type.Boolean(),
  visible: Type.Boolean(),
  restricted: Type.Boolean(),
  locked: Type.Boolean(),
  source: Type.String({
    description: '`builtin`, `mcp:<server>`, `ext:<name>`, or `declared` (declared but offered by no registry here)',
  }),
  description: Type.String(),
  schema: Type.Object({}, { additionalProperties: true }),
  restrictions: Type.Object({ restricted: Type.Boolean(), locked: Type.Boolean() }),
  disabledReason: Type.Optional(
    Type.String({
      description:
        'why the tool is disabled whatever the agent declares (an MCP tool whose input schema changed, until the owner re-enables it)',
    }),
  ),
});

export const MetaProtection = Type.Union([Type.Literal('none'), Type.Literal('readonly'), Type.Literal('increment')]);

export const MetaEntry = Type.Object({ key: Type.String(), value: Type.String(), protection: MetaProtection });

export const LogEntry = Type.Object({
  id: Type.Integer(),
  level: Type.Union([Type.Literal('debug'), Type.Literal('info'), Type.Literal('warn'), Type.Literal('error')]),
  origin: Nullable(Type.String()),
  event: Nullable(Type.String()),
  target: Nullable(Type.String()),
  message: Type.String(),
  data: Nullable(Type.String({ description: 'JSON text' })),
  created_at: Type.Integer({ description: 'epoch ms' }),
});

export const UsageTotals = Type.Object({
  input: Type.Integer({ description: 'includes cacheRead and cacheWrite' }),
  output: Type.Integer(),
  cacheRead: Type.Integer(),
  cacheWrite: Type.Integer(),
  total: Type.Integer({ description: 'input + output' }),
});

/** Ledger totals of model calls (`agt_usage`, docs/costs.md). */
export const SpendTotals = Type.Object({
  input: Type.Integer({ description: 'input tokens, cached included' }),
  output: Type.Integer(),
  cached: Type.Integer({ description: 'cache-read input tokens' }),
  calls: Type.Integer(),
  cost_usd: Type.Union([Type.Number(), Type.Null()], {
    description: 'USD of the priced calls; null when none had a price',
  }),
  unpriced_calls: Type.Integer({ description: 'calls whose model had no price (tokens counted, cost unknown)' }),
});

const NumberMap = Type.Record(Type.String(), Type.Number());
/** Each budget that applies (`agent.day_usd`, `daemon.month_usd`, ...) with today's owner raises included. */
export const BudgetView = Type.Object({
  limits: NumberMap,
  used: NumberMap,
  remaining: NumberMap,
  resets_at: Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]), {
    description: 'ISO time the budget starts over; null for turn_tokens',
  }),
});

export const DaemonUsage = Type.Object({
  from: Type.String(),
  to: Type.String(),
  timezone: Type.String(),
  totals: SpendTotals,
  groups: Type.Array(
    Type.Intersect([
      Type.Object({ key: Type.String({ description: 'agent id, `<provider>/<model>` or `YYYY-MM-DD`' }) }),
      SpendTotals,
    ]),
  ),
  warnings: Type.Array(Type.String()),
});

export const UsageRollup = Type.Object({
  agentId: Type.String(),
  cost_usd: Type.Optional(
    Type.Union([Type.Number(), Type.Null()], { description: "all-time USD of the agent's model calls (ledger)" }),
  ),
  spend: SpendTotals,
  budget: BudgetView,
  source: Type.Literal('agt_loop'),
  note: Type.String(),
  loopRows: Type.Integer(),
  usageRows: Type.Integer(),
  totals: UsageTotals,
  byModel: Type.Array(Type.Intersect([UsageTotals, Type.Object({ model: Type.String(), rows: Type.Integer() })])),
});

export const InboxMessage = Type.Object({
  id: Type.Integer(),
  source: Type.String({ description: '`channel:<type>`, `mesh` or `api`' }),
  sender: Nullable(Type.String()),
  text: Type.String(),
  data: Type.Unknown(),
  status: Type.String({ description: '`unread` when new; `read`, `processed`, `failed`, ...' }),
  external_id: Type.Optional(
    Nullable(
      Type.String({ description: 'the message id at its origin (mesh envelope id); one row per source and id' }),
    ),
  ),
  created_at: Type.Integer(),
  updated_at: Type.Integer(),
});

export const OutboxMessage = Type.Object({
  id: Type.Integer(),
  channel: Type.String(),
  recipient: Nullable(Type.String()),
  text: Type.String(),
  data: Type.Unknown(),
  status: Type.String({
    description:
      '`queued` (no transport claims its address), `pending` (a transport is delivering it), `delivered`, `failed`',
  }),
  error: Nullable(Type.String()),
  attempts: Type.Integer(),
  status_code: Type.Optional(Nullable(Type.Integer({ description: "the receiver's last HTTP status (mesh)" }))),
  delivered_at: Type.Optional(Nullable(Type.Integer({ description: 'epoch ms of the delivery' }))),
  created_at: Type.Integer(),
  updated_at: Type.Integer(),
});

export const ReviewIdentity = Type.Object(
  {
    agentDid: Nullable(Type.String()),
    fileOwnerDid: Nullable(Type.String()),
    ownerIsYou: Type.Boolean(),
    scenario: Type.String({ description: '`mine`, `recognized`, `foreign`, `unclaimed`, `needsClaim`, ...' }),
  },
  { additionalProperties: true },
);

export const ReviewSummary = Type.Object(
  {
    name: Type.String(),
    description: Type.String(),
    icon: Type.Optional(Type.String()),
    identity: ReviewIdentity,
    computeTier: Type.Union([Type.Literal('shared'), Type.Literal('isolated'), Type.Literal('host')]),
    autostart: Type.Boolean(),
    tools: Type.Array(Type.Object({ name: Type.String(), enabled: Type.Boolean(), notable: Type.Boolean() })),
    mcpServers: Type.Array(Type.Object({}, { additionalProperties: true })),
    triggers: Type.Array(Type.Object({ type: Type.String(), enabled: Type.Boolean(), targetCount: Type.Integer() })),
    codeExecution: Type.Boolean(),
    messaging: Type.Object(
      { mode: Type.String(), adapters: Type.Optional(Type.Array(Type.String())) },
      { additionalProperties: true },
    ),
    network: Type.Object({}, { additionalProperties: true }),
    security: Type.Object({}, { additionalProperties: true }),
    capped: Type.Optional(
      Type.Array(CappedField, {
        description: "what the owner's ceiling narrows in the file's `security` and `limits`",
      }),
    ),
    refused: Type.Optional(
      Type.Array(RefusedField, { description: "parts of the config the owner's settings refuse" }),
    ),
  },
  { additionalProperties: true },
);

export const SchemaObject = Type.Object({
  type: Type.String({
    description:
      '`table` or `index` (a file carrying a trigger, a view or a virtual table is refused: 422 `load_failed`, `reason: "unsafe_schema"`)',
  }),
  name: Type.String(),
  table: Type.String({ description: 'the table it belongs to' }),
  virtual: Type.Optional(Type.Boolean()),
});

export const ReviewInfo = Type.Object({
  agentId: Type.String(),
  filePath: Type.String(),
  reviewed: Type.Boolean(),
  summary: ReviewSummary,
  schemaObjects: Type.Array(SchemaObject, {
    description:
      "schema objects the file carries besides the daemon's own `agt_*` tables and indexes and SQLite's: the agent's `local_*` tables and indexes",
  }),
});

export const UmbilicalEventItem = Type.Object({
  seq: Type.Integer(),
  event_type: Type.String(),
  timestamp: Type.Integer(),
  source: Type.String(),
  payload: Type.Unknown(),
  truncated: Type.Boolean(),
});

export const UmbilicalPage = Type.Object({
  agentId: Type.String(),
  events: Type.Array(UmbilicalEventItem),
  last_seq: Nullable(Type.Integer()),
  log_enabled: Type.Boolean(),
  oldest_seq: Type.Optional(Type.Integer()),
});

export type AgentSummary = Static<typeof AgentSummary>;
export type AgentRef = Static<typeof AgentRef>;
export type CappedField = Static<typeof CappedField>;
export type RefusedField = Static<typeof RefusedField>;
export type AgentStatus = Static<typeof AgentStatus>;
export type AgentCandidate = Static<typeof AgentCandidate>;
export type ToolEntry = Static<typeof ToolEntry>;
/** `GET /agents/{id}/tools`. */
export const AgentTools = Type.Object({ agentId: Type.String(), tools: Type.Array(ToolEntry) });
export type ReviewIdentity = Static<typeof ReviewIdentity>;
export type ReviewSummary = Static<typeof ReviewSummary>;
export type ReviewInfo = Static<typeof ReviewInfo>;
export type SchemaObject = Static<typeof SchemaObject>;
export type UmbilicalPage = Static<typeof UmbilicalPage>;

/** One item of `GET /tasks`: an approval, budget task, ask or suspend prompt waiting for the owner. */
export const PendingTask = Type.Object({
  kind: Type.Union([Type.Literal('approval'), Type.Literal('budget'), Type.Literal('ask'), Type.Literal('suspend')]),
  id: Type.String({ description: 'the taskId (approval) or requestId (ask, suspend)' }),
  agentId: Type.String(),
  agentName: Type.String(),
  loop: Type.String(),
  turnId: Nullable(Type.String()),
  createdAt: Type.Integer(),
  tool: Type.Optional(Type.String({ description: 'approval: the restricted tool the model called' })),
  args: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'approval: its arguments' })),
  question: Type.Optional(Type.String({ description: 'ask: the question' })),
  schema: Type.Optional(
    Type.Object(
      {},
      { additionalProperties: true, description: 'ask: the JSON Schema of the answer wanted, when the asker gave one' },
    ),
  ),
  reason: Type.Optional(Type.String({ description: 'suspend: why the agent asks to suspend' })),
});
export type PendingTask = Static<typeof PendingTask>;
