/**
 * How one declared server runs: a registration of the same name in settings `mcpServers` decides
 * (an installed npm package run with node, a command, or a URL); without one, a declaration whose
 * `source` is `npm:<package>` runs that package once the owner installed it. An agent file never names
 * an executable or a network destination itself (agents are untrusted: only the owner's registrations
 * and installed packages start processes or open connections; a URL in an agent file could aim at this
 * host's private services). Anything else is skipped with the reason, and the agent loads without it.
 *
 * Variables: the agent's (`env`, `env_keys`) only by the names the registration allows (`allowAgentEnv`,
 * see child-env.ts); a declaration without a registration passes none. Headers likewise: the agent's
 * (`headers`, `header_env`, `bearer_token_env_var` = `Authorization`) only by the names the registration
 * allows (`allowAgentHeaders`, see agent-headers.ts), never one the registration sets (`headerEnv`).
 *
 * Sandbox: a registration's `sandbox` runs the server in the calling agent's command sandbox (the kernel's
 * `ctx.agents.spawnSandboxed`): a command as the sandbox sees it, an npm package through the mounts of
 * `sandboxedNpm`; the environment is then the sandbox's base plus the registration's and the agent's allowed names.
 *
 * Secrets: the registration names daemon variables (`envFrom`, `headerEnv`); the declaration names
 * credentials of the agent, `mcp:<server>:<KEY>` (`env_keys`, `header_env`, `bearer_token_env_var`).
 * Their values are collected in `secrets` so logs and errors can be scrubbed of them.
 */
import type { McpServerConfig } from '@agt/contracts';
import type { ExtensionEnv } from '@agt/contracts';
import { type McpRegistration, SANDBOX_MOUNT_ROOT } from '@agt/contracts';
import { realpathSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { agentHeaderAsks, agentHeadersAllowed, headerAllowed } from './agent-headers.js';
import { addAgentEnv, addEnv, agentEnvAllowed, baseChildEnv } from './child-env.js';
import type { StdioLaunch } from './stdio-transport.js';
import { installedBin } from './packages.js';

/** Where a sandboxed npm server's node and installed packages appear (read-only, under the sandbox's `/agt`). */
const SANDBOX_NODE = 'bin/node';
const SANDBOX_PACKAGES = 'mcp-servers/node_modules';

/**
 * An npm server in the agent's sandbox: this node and the installed packages (`node_modules`, so a package's
 * dependencies resolve as they do outside) mounted read-only, the script named by its path inside.
 */
function sandboxedNpm(packagesDir: string, bin: string, args: string[], env: Record<string, string>): StdioLaunch {
  const modules = realpathSync(join(packagesDir, 'node_modules'));
  return {
    command: `${SANDBOX_MOUNT_ROOT}/${SANDBOX_NODE}`,
    args: [`${SANDBOX_MOUNT_ROOT}/${SANDBOX_PACKAGES}/${relative(modules, bin).split(sep).join('/')}`, ...args],
    env,
    sandbox: { mounts: { [SANDBOX_NODE]: process.execPath, [SANDBOX_PACKAGES]: modules } },
  };
}

export type Launch =
  | { kind: 'skip'; reason: string }
  | { kind: 'stdio'; stdio: StdioLaunch; timeoutMs: number | undefined; secrets: string[]; notes: string[] }
  | {
      kind: 'http';
      url: URL;
      /** The registration, when the server is signed in to by OAuth (its tokens are added at connect). */
      oauth?: McpRegistration & { url: string };
      headers: Record<string, string>;
      timeoutMs: number | undefined;
      secrets: string[];
      notes: string[];
    };

export interface LaunchDeps {
  env: ExtensionEnv;
  /** The data directory's `mcp-servers/` folder. */
  packagesDir: string;
  /** Reads the agent's sealed credential; undefined when unset or locked. */
  credential(name: string): Promise<string | undefined>;
}

export const credentialName = (server: string, key: string) => `mcp:${server}:${key}`;

export async function resolveLaunch(
  declaration: McpServerConfig,
  registration: McpRegistration | undefined,
  deps: LaunchDeps,
): Promise<Launch> {
  const name = declaration.name;
  const secrets: string[] = [];
  const notes: string[] = [];
  const timeoutMs = declaration.tool_call_timeout_ms ?? registration?.toolCallTimeoutMs;
  const fromCredential = async (key: string) => {
    const value = await deps.credential(credentialName(name, key));
    if (value === undefined)
      notes.push(`credential ${credentialName(name, key)} is not set (or the agent's credentials are locked)`);
    else secrets.push(value);
    return value;
  };

  let target:
    | { type: 'npm'; pkg: string; args: string[] }
    | { type: 'command'; command: string; args: string[] }
    | { type: 'http'; url: string };
  if (registration) {
    if (registration.type === 'npm')
      target = { type: 'npm', pkg: registration.npmPackage ?? '', args: registration.args ?? [] };
    else if (registration.type === 'command')
      target = { type: 'command', command: registration.command ?? '', args: registration.args ?? [] };
    else target = { type: 'http', url: registration.url ?? '' };
  } else if (declaration.source?.startsWith('npm:')) {
    // Never the declaration's args: they would be an untrusted file's arguments to the owner's program
    // (a filesystem server given `/`). A server that needs arguments is registered.
    target = { type: 'npm', pkg: declaration.source.slice(4), args: [] };
  } else if (declaration.source) {
    return {
      kind: 'skip',
      reason: `source ${declaration.source} names nothing this daemon runs for an agent: register the server (POST /mcp/servers) or use source npm:<installed package>`,
    };
  } else {
    return { kind: 'skip', reason: `no MCP server registration named ${name} and no source in the declaration` };
  }

  if (target.type === 'http') {
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      return { kind: 'skip', reason: `invalid URL for MCP server ${name}` };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return { kind: 'skip', reason: `MCP server ${name}: only http and https URLs` };
    // Keyed by the lowercase name: one value per header whatever case each side wrote.
    const headers = new Map<string, [string, string]>();
    for (const [header, variable] of Object.entries(registration?.headerEnv ?? {})) {
      const value = deps.env.get(variable);
      if (value === undefined) notes.push(`variable ${variable} for header ${header} is not set`);
      else {
        headers.set(header.toLowerCase(), [header, value]);
        secrets.push(value);
      }
    }
    // The agent's headers: only names the registration allows (allowAgentHeaders), never one it sets
    // itself; a refused header's credential is never even read.
    const allowed = agentHeadersAllowed(registration);
    const refused: string[] = [];
    for (const ask of agentHeaderAsks(declaration)) {
      if (!headerAllowed(ask, allowed)) {
        refused.push(ask.header || '(unnamed)');
        continue;
      }
      const value = ask.credential !== undefined ? await fromCredential(ask.credential) : ask.value;
      if (value !== undefined)
        headers.set(ask.header.toLowerCase(), [ask.header, ask.bearer ? `Bearer ${value}` : value]);
    }
    if (refused.length > 0)
      notes.push(
        `headers not sent to the server (not in the registration's allowAgentHeaders, or set by the registration): ${[...new Set(refused)].join(', ')}`,
      );
    const oauth = registration?.oauth ? { oauth: registration as McpRegistration & { url: string } } : {};
    return { kind: 'http', url, ...oauth, headers: Object.fromEntries(headers.values()), timeoutMs, secrets, notes };
  }

  // A sandboxed server gets the sandbox's own base (PATH, HOME=/work, TMPDIR=/tmp): the daemon's name host paths.
  const sandboxed = registration?.sandbox === true;
  const env = sandboxed ? {} : baseChildEnv(deps.env);
  const ownerDropped = [
    ...addEnv(env, registration?.env ?? {}),
    ...addEnv(
      env,
      Object.fromEntries(
        Object.entries(registration?.envFrom ?? {}).map(([child, variable]) => {
          const value = deps.env.get(variable);
          if (value !== undefined) secrets.push(value);
          return [child, value];
        }),
      ),
    ),
  ];
  // The agent's variables: only names the owner's registration allows (allowAgentEnv); a refused
  // env_keys credential is never even read.
  const allowed = agentEnvAllowed(registration);
  const dropped: string[] = [];
  dropped.push(...addAgentEnv(env, declaration.env ?? {}, allowed));
  for (const key of declaration.env_keys ?? []) {
    if (!allowed.has(key)) dropped.push(key);
    else dropped.push(...addAgentEnv(env, { [key]: await fromCredential(key) }, allowed));
  }
  if (ownerDropped.length > 0)
    notes.push(`variables not passed to the server (refused names): ${[...new Set(ownerDropped)].join(', ')}`);
  if (dropped.length > 0)
    notes.push(
      `variables not passed to the server (not in the registration's allowAgentEnv): ${[...new Set(dropped)].join(', ')}`,
    );

  if (target.type === 'command') {
    if (!target.command) return { kind: 'skip', reason: `registration ${name} has no command` };
    const stdio = {
      command: target.command,
      args: target.args,
      env,
      ...(sandboxed ? { sandbox: { mounts: {} } } : {}),
    };
    return { kind: 'stdio', stdio, timeoutMs, secrets, notes };
  }
  const bin = installedBin(deps.packagesDir, target.pkg);
  if (!bin)
    return {
      kind: 'skip',
      reason: `MCP package ${target.pkg || '(none)'} is not installed (POST /mcp/packages installs it)`,
    };
  // Run with this node, never through npx: nothing is downloaded at call time.
  if (sandboxed)
    return { kind: 'stdio', stdio: sandboxedNpm(deps.packagesDir, bin, target.args, env), timeoutMs, secrets, notes };
  return {
    kind: 'stdio',
    stdio: { command: process.execPath, args: [bin, ...target.args], env, cwd: deps.packagesDir },
    timeoutMs,
    secrets,
    notes,
  };
}
