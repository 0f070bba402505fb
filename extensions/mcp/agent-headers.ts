/**
 * The HTTP headers an agent may send to an MCP server, built from an allow-list like its variables
 * (child-env.ts): only the names the owner's registration lists in `allowAgentHeaders` (any case; none by
 * default, none at all for a server the owner did not register), and never a name the registration sets
 * itself (`headerEnv`): the owner's `Authorization` stays the owner's. An agent's `headers`, `header_env`
 * and `bearer_token_env_var` (which is `Authorization`) are each one header name checked here.
 */
import type { McpServerConfig } from '@agt/contracts';

const HEADER_NAME = /^[A-Za-z0-9-]{1,100}$/;

interface HeaderRegistration {
  allowAgentHeaders?: readonly string[];
  headerEnv?: Readonly<Record<string, string>>;
  oauth?: unknown;
}

/** One header the agent's declaration asks for: where (a config field) and the header's name. */
export interface AgentHeaderAsk {
  field: string;
  header: string;
  /** A plain value (`headers`), or the credential key to read (`header_env`, `bearer_token_env_var`). */
  value?: string;
  credential?: string;
  bearer?: boolean;
}

/**
 * Lowercased names the agent may send: `allowAgentHeaders` minus what the registration sets itself
 * (`headerEnv`, and `Authorization` when the server is signed in to by OAuth).
 */
export function agentHeadersAllowed(registration: HeaderRegistration | undefined): ReadonlySet<string> {
  const owner = new Set(Object.keys(registration?.headerEnv ?? {}).map((h) => h.toLowerCase()));
  if (registration?.oauth) owner.add('authorization');
  return new Set(
    (registration?.allowAgentHeaders ?? [])
      .map((h) => h.toLowerCase())
      .filter((h) => HEADER_NAME.test(h) && !owner.has(h)),
  );
}

/** Every header the declaration asks for, each named by its config field. */
export function agentHeaderAsks(declaration: McpServerConfig): AgentHeaderAsk[] {
  const base = `mcp.servers.${declaration.name}`;
  const asks: AgentHeaderAsk[] = Object.entries(declaration.headers ?? {}).map(([header, value]) => ({
    field: `${base}.headers.${header}`,
    header,
    value,
  }));
  for (const entry of declaration.header_env ?? []) {
    const header = String(entry.header ?? entry.name ?? '');
    const key = String(entry.env ?? entry.env_var ?? entry.key ?? '');
    asks.push({ field: `${base}.header_env.${header || '(unnamed)'}`, header, credential: key });
  }
  if (declaration.bearer_token_env_var !== undefined)
    asks.push({
      field: `${base}.bearer_token_env_var`,
      header: 'Authorization',
      credential: declaration.bearer_token_env_var,
      bearer: true,
    });
  return asks;
}

/** Whether one ask may be honoured: a well-formed name in `allowed`, and a credential key when it reads one. */
export function headerAllowed(ask: AgentHeaderAsk, allowed: ReadonlySet<string>): boolean {
  return (
    HEADER_NAME.test(ask.header) &&
    allowed.has(ask.header.toLowerCase()) &&
    (ask.credential === undefined || ask.credential.length > 0)
  );
}
