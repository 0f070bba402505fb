/**
 * MCP server registrations (docs/mcp.md): the daemon-wide settings key `mcpServers`, owned by the `mcp`
 * extension. A registration says how to run a server (an installed npm package, a command, or a URL);
 * an agent's declared server of the same `name` (`mcp.servers[]` in its config) then runs with it.
 *
 * No secret is ever written here: `env` holds plain values only, and secret values come from the
 * daemon's environment (`envFrom`, `headerEnv` name variables) or from the agent's sealed credentials
 * (`mcp:<server>:<KEY>`). Variables that change how a child process loads code (`NODE_OPTIONS`,
 * `LD_*`, `DYLD_*`) and the daemon's own `AGT_*` are refused as names. An agent sets only the variable
 * names its server's registration lists in `allowAgentEnv` (none by default; a server without a
 * registration takes none from the agent); likewise the HTTP header names in `allowAgentHeaders`.
 */
import { Type, type Static } from 'typebox';

/**
 * An environment variable name a child may receive.
 *
 * @beta
 */
export const McpEnvName = Type.String({
  pattern: '^(?!AGT_|NODE_OPTIONS$|LD_|DYLD_)[A-Za-z_][A-Za-z0-9_]*$',
  maxLength: 128,
  description: 'variable name; AGT_*, NODE_OPTIONS, LD_* and DYLD_* are refused',
});

/**
 * A server name: also part of model-facing tool names (`mcp_<server>_<tool>`) and credential names.
 *
 * @beta
 */
export const McpServerName = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$',
  description: 'letters, digits, _ and -, at most 40',
});

/**
 * An npm package spec: a name with an optional version or range, or a local tarball or folder path.
 *
 * @beta
 */
export const McpPackageSpec = Type.String({
  minLength: 1,
  maxLength: 300,
  pattern: '^[^-\\s\\x00-\\x1f\\x7f;&|`$<>][^\\s\\x00-\\x1f\\x7f;&|`$<>]*$',
  description: 'never an npm option (no leading -), no spaces or control characters',
});

/**
 * MCP's log levels (RFC 5424's severities), least severe first.
 *
 * @beta
 */
export const McpLogLevels = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;

/** @beta */
export type McpLogLevel = (typeof McpLogLevels)[number];

/** @beta */
export const McpRegistration = Type.Object(
  {
    name: McpServerName,
    type: Type.Union([Type.Literal('npm'), Type.Literal('command'), Type.Literal('http')]),
    npmPackage: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 214,
        description: 'type npm: the installed package (see POST /mcp/packages), run with node from mcp-servers/',
      }),
    ),
    command: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'type command: the executable' })),
    args: Type.Optional(Type.Array(Type.String({ maxLength: 4000 }), { maxItems: 64 })),
    url: Type.Optional(
      Type.String({
        pattern: '^https?://',
        maxLength: 2000,
        description: 'type http: the Streamable HTTP (or older SSE) endpoint',
      }),
    ),
    env: Type.Optional(
      Type.Record(McpEnvName, Type.String({ maxLength: 4000 }), { description: 'plain values, never secrets' }),
    ),
    envFrom: Type.Optional(
      Type.Record(McpEnvName, McpEnvName, { description: "child variable → the daemon's variable holding its value" }),
    ),
    headerEnv: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z0-9-]{1,100}$' }), McpEnvName, {
        description: "HTTP header → the daemon's variable holding its value",
      }),
    ),
    toolCallTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000 })),
    allowAgentEnv: Type.Optional(
      Type.Array(McpEnvName, {
        maxItems: 64,
        uniqueItems: true,
        description:
          "the only variable names an agent may set for this server (its declaration's `env` and `env_keys`, from its file or its own `sys_update_config`); default none: every other name is refused at config time and never reaches the child",
      }),
    ),
    sampling: Type.Optional(
      Type.Union([Type.Literal('deny'), Type.Literal('ask'), Type.Literal('allow')], {
        description:
          "the server's sampling requests (it asks agt's model) during a tool call run on the calling agent's provider and model, within its budgets: `ask` (default) makes each an approval task showing the server's prompt, `allow` runs them, `deny` refuses them",
      }),
    ),
    oauth: Type.Optional(
      Type.Object(
        {
          clientId: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 500,
              description:
                'a client id the owner registered with the authorization server beforehand (used instead of dynamic registration)',
            }),
          ),
          /** The daemon's variable holding that client's secret, for a confidential client. */
          clientSecretEnv: Type.Optional(McpEnvName),
          clientMetadataUrl: Type.Optional(
            Type.String({
              pattern: '^https://[^/]+/.+',
              maxLength: 2000,
              description:
                'an https URL where the owner publishes a Client ID Metadata Document for agt; used as the client id by authorization servers that support it',
            }),
          ),
          scopes: Type.Optional(
            Type.String({
              maxLength: 2000,
              description: "scopes to ask for when the server's challenge and metadata name none (space-separated)",
            }),
          ),
          signIn: Type.Optional(
            Type.Union([Type.Literal('owner'), Type.Literal('per-agent')], {
              description:
                "whose account the agents use on the server: `owner` (default: one sign-in, every agent declaring the server uses it) or `per-agent` (the owner signs in once per agent, `agt mcp login <name> --agent <id>`; each agent's tokens are sealed under its id, and an agent without a sign-in of its own does not connect: never another agent's tokens)",
            }),
          ),
        },
        {
          additionalProperties: false,
          description:
            "type http: the server needs an OAuth 2.1 sign-in (`agt mcp login <name>`); its tokens are sealed by the daemon and sent by agt's MCP client only, never to an agent",
        },
      ),
    ),
    allowAgentHeaders: Type.Optional(
      Type.Array(Type.String({ pattern: '^[A-Za-z0-9-]{1,100}$' }), {
        maxItems: 64,
        uniqueItems: true,
        description:
          "type http: the only HTTP header names (any case) an agent may send to this server (its declaration's `headers`, `header_env`; `bearer_token_env_var` is `Authorization`); default none. A header the registration sets (`headerEnv`) is never the agent's; every other name is refused at config time and never sent",
      }),
    ),
    exposeWorkFolder: Type.Optional(
      Type.Boolean({
        description:
          "type npm or command: offer the calling agent's work folder (the one its commands see as /work) to the server as its only root (`roots/list`, one file:// URI: `file:///work` with `sandbox`, else its host path); default false: the client declares no roots. Roots tell a server where to work; only `sandbox` confines it (without it a stdio server runs as the daemon's user)",
      }),
    ),
    sandbox: Type.Optional(
      Type.Boolean({
        description:
          "type npm or command: run the server inside the calling agent's command sandbox (bubblewrap: its own namespaces, no network, the read-only system folders, the agent's work folder at /work, rlimits of settings commandLimits, the agent's uid when the daemon runs as root), one per agent; an npm server also sees its installed package and the node binary, read-only. Where no sandbox can be made the server does not start (never unsandboxed). Default false",
      }),
    ),
    logLevel: Type.Optional(
      Type.Union(
        McpLogLevels.map((level) => Type.Literal(level)),
        {
          description:
            "the least severe of the server's log messages (`notifications/message`) written to the agent's log; sent to a server that declares logging as `logging/setLevel` (default `warning`)",
        },
      ),
    ),
  },
  { additionalProperties: false },
);

/** @beta */
export type McpRegistration = Static<typeof McpRegistration>;
