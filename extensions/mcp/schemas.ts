/** TypeBox schemas of the MCP routes (they are the validation, the types and the OpenAPI document). */
import { Type } from 'typebox';
import { AgentIdParams } from '@agt/contracts';
import { McpPackageSpec, McpRegistration, McpServerName } from '@agt/contracts';

export const TAG = 'MCP';

export const ServerStatus = Type.Union([
  Type.Literal('stopped'),
  Type.Literal('connecting'),
  Type.Literal('connected'),
  Type.Literal('error'),
  Type.Literal('skipped'),
]);

export const ServerView = Type.Object({
  name: Type.String(),
  transport: Type.Union([Type.Literal('stdio'), Type.Literal('http')]),
  status: ServerStatus,
  toolCount: Type.Integer(),
  error: Type.Optional(Type.String({ description: 'why it is in error or skipped' })),
  connectedAt: Type.Optional(Type.Integer({ description: 'epoch ms of the current connection' })),
  protocolVersion: Type.Optional(
    Type.String({ description: 'the MCP protocol revision agreed for the current connection, e.g. 2026-07-28' }),
  ),
  restartCount: Type.Integer({ description: 'reconnects so far (automatic and requested)' }),
  logs: Type.Array(Type.String(), { description: 'recent stderr and status lines, bounded, secrets scrubbed' }),
  pid: Type.Optional(Type.Integer({ description: 'the stdio child process while it runs' })),
});

export const AgentServerList = Type.Object({ agentId: Type.String(), servers: Type.Array(ServerView) });

export const Overview = Type.Object({
  registrations: Type.Array(McpRegistration),
  servers: Type.Array(Type.Intersect([Type.Object({ agentId: Type.String() }), ServerView]), {
    description: 'open servers of loaded agents',
  }),
});

export const RegistrationBody = McpRegistration;
export const RegistrationAnswer = Type.Object({ registration: McpRegistration });
export const NameParams = Type.Object({ name: McpServerName });
export const Removed = Type.Object({ name: Type.String(), removed: Type.Literal(true) });

export const InstalledPackage = Type.Object({
  name: Type.String(),
  version: Type.Union([Type.String(), Type.Null()]),
  bin: Type.Union([Type.String(), Type.Null()], { description: 'the script a type npm registration runs' }),
});
export const PackageOperation = Type.Object({
  spec: Type.String(),
  action: Type.Union([Type.Literal('install'), Type.Literal('uninstall')]),
  status: Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]),
  error: Type.Optional(Type.String()),
  startedAt: Type.Integer(),
  finishedAt: Type.Optional(Type.Integer()),
});
export const PackageList = Type.Object({
  dir: Type.String({ description: "the data directory's mcp-servers/" }),
  packages: Type.Array(InstalledPackage),
  operations: Type.Array(PackageOperation, { description: 'the latest installs and removals, newest first' }),
});
export const InstallRunning = Type.Object({ operation: PackageOperation });
export const InstallBody = Type.Object({ package: McpPackageSpec }, { additionalProperties: false });
export const InstallAnswer = Type.Object({ package: InstalledPackage });
export const PackageQuery = Type.Object({ package: Type.String({ minLength: 1, maxLength: 214 }) });
export const PackageRemoved = Type.Object({ package: Type.String(), removed: Type.Literal(true) });

/** Path params of agent-scoped routes: the contract's one `AgentIdParams`. */
export const AgentParams = AgentIdParams;
export const AgentServerParams = Type.Object({
  id: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1, maxLength: 100 }),
});
export const AgentToolParams = Type.Object({
  id: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1, maxLength: 100 }),
  tool: Type.String({ minLength: 1, maxLength: 300 }),
});
export const ToolEnabled = Type.Object({
  agentId: Type.String(),
  server: Type.String(),
  tool: Type.String(),
  enabled: Type.Literal(true),
});

const SignInAgent = Type.Optional(
  Type.String({ description: 'a per-agent registration (`oauth.signIn: per-agent`): the agent whose sign-in this is' }),
);
export const SignInQuery = Type.Object({
  agent: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'a per-agent registration: the loaded agent (id, handle or name) whose own sign-in this is; refused for an owner sign-in',
    }),
  ),
});
export const SignInStarted = Type.Object({
  server: Type.String(),
  agentId: SignInAgent,
  authorizationUrl: Type.Optional(
    Type.String({ description: 'open in a browser on this machine; absent when no browser step was needed' }),
  ),
  expiresAt: Type.Optional(Type.Integer({ description: 'epoch ms: the sign-in waits for the browser until then' })),
});
export const SignInState = Type.Object({
  server: Type.String(),
  agentId: SignInAgent,
  signedIn: Type.Boolean(),
  scopeNeeded: Type.Optional(
    Type.String({
      description:
        'sign-in needed (more scopes): the server answered insufficient_scope; the next sign-in asks for these scopes (what the account held and what the server asked for)',
    }),
  ),
  expiresAt: Type.Optional(Type.Integer({ description: 'epoch ms when the access token expires (refreshed before)' })),
  scope: Type.Optional(Type.String({ description: 'the scopes granted' })),
  pending: Type.Boolean({ description: 'a sign-in waits for the browser' }),
  error: Type.Optional(Type.String({ description: 'how the last sign-in failed' })),
});
export const SignedOut = Type.Object({
  server: Type.String(),
  agentId: SignInAgent,
  signedOut: Type.Boolean({ description: 'false when it was not signed in' }),
});
export const ClientSecretBody = Type.Object({ value: Type.String({ maxLength: 4000 }) });
export const ClientSecretState = Type.Object({ server: Type.String(), clientSecretSet: Type.Boolean() });

const ToolDefinitionSeen = Type.Object({
  description: Type.String(),
  inputSchema: Type.Unknown({ description: 'the input schema (JSON Schema)' }),
});
export const ReviewList = Type.Object({
  server: Type.String(),
  changes: Type.Array(
    Type.Object({
      tool: Type.String({ description: "the server's own tool name" }),
      changed: Type.Array(Type.Union([Type.Literal('description'), Type.Literal('inputSchema')])),
      before: ToolDefinitionSeen,
      after: ToolDefinitionSeen,
      seenAt: Type.Integer({ description: 'epoch ms when the server first listed the changed definition' }),
    }),
  ),
});
export const ReviewBody = Type.Optional(
  Type.Object({
    tools: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        maxItems: 500,
        description: 'the tools to approve (default: every changed one)',
      }),
    ),
  }),
);
export const ReviewApproved = Type.Object({ server: Type.String(), approved: Type.Array(Type.String()) });
