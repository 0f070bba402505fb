/** The `mcp` extension's manifest options (`config` of its entry in `extensions.json`). */
import { Type, type Static } from 'typebox';

export const McpOptions = Type.Object(
  {
    connectTimeoutMs: Type.Integer({
      minimum: 100,
      default: 20_000,
      description: 'connect and initialize budget per server (20 s)',
    }),
    startBudgetMs: Type.Integer({
      minimum: 0,
      default: 5_000,
      description: "how long an agent's first turn waits for its servers to connect; slower ones join later",
    }),
    defaultToolCallTimeoutMs: Type.Integer({
      minimum: 100,
      default: 60_000,
      description: 'per-call limit when neither the declaration nor the registration sets one; progress restarts it',
    }),
    reconnectTries: Type.Integer({
      minimum: 0,
      maximum: 10,
      default: 3,
      description: 'reconnect attempts after a server fails, before it stays in error until restarted',
    }),
    reconnectBaseMs: Type.Integer({
      minimum: 10,
      default: 500,
      description: 'first reconnect delay; doubled each try',
    }),
    logLines: Type.Integer({
      minimum: 1,
      maximum: 1000,
      default: 50,
      description: 'recent stderr and status lines kept per server',
    }),
    installTimeoutMs: Type.Integer({
      minimum: 1000,
      default: 300_000,
      description: 'limit of one npm install or uninstall',
    }),
    serverMaxSessions: Type.Integer({
      minimum: 1,
      maximum: 10_000,
      default: 100,
      description: 'agt as an MCP server: open sessions at most (the idlest ends to make room)',
    }),
    serverSessionIdleMs: Type.Integer({
      minimum: 1000,
      default: 1_800_000,
      description: 'agt as an MCP server: a session unused this long ends',
    }),
    installWaitMs: Type.Integer({
      minimum: 0,
      default: 10_000,
      description: 'how long POST /mcp/packages holds the request before answering 202 with the running install',
    }),
    elicitationTimeoutMs: Type.Integer({
      minimum: 1000,
      default: 600_000,
      description: "how long a server's elicitation waits for the owner's answer before it is cancelled",
    }),
    oauthCallbackPort: Type.Integer({
      minimum: 0,
      maximum: 65_535,
      default: 0,
      description:
        "the port on 127.0.0.1 where an OAuth sign-in's browser comes back; 0 picks a free one when the first sign-in starts",
    }),
    oauthLoginTimeoutMs: Type.Integer({
      minimum: 1000,
      default: 600_000,
      description: 'how long a started OAuth sign-in waits for the browser to come back',
    }),
  },
  { additionalProperties: false },
);

export type McpOptions = Static<typeof McpOptions>;
