/**
 * The environment of an MCP server's child process, built from allow-lists: a few variables a program
 * needs to run (PATH, HOME, locale, temp dir) taken from the daemon's environment, then what the owner's
 * registration adds (`env`, `envFrom`: the owner's names, minus `AGT_*`, `NODE_OPTIONS`, `LD_*`,
 * `DYLD_*`), then what the agent asks for (its declaration's `env` and `env_keys`): only the names the
 * owner's registration lists in `allowAgentEnv` (none by default; a server without a registration, run
 * from `source: npm:<package>`, takes none). Nothing else is inherited or passed: an agent cannot reach
 * `GIT_CONFIG_PARAMETERS`, `HTTPS_PROXY`, `GLIBC_TUNABLES` or any other variable that changes how the
 * owner's program behaves unless the owner named it for that server.
 */
import type { ExtensionEnv } from '@agt/contracts';

const BASE = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TERM',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'SYSTEMROOT',
];

/** Names that change how a child loads code, or that belong to the daemon. */
export function isRefusedEnvName(name: string): boolean {
  return /^(AGT_|LD_|DYLD_)/.test(name) || name === 'NODE_OPTIONS' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
}

/** The names an agent may set for a server: its registration's `allowAgentEnv` (none without one). */
export function agentEnvAllowed(registration: { allowAgentEnv?: readonly string[] } | undefined): ReadonlySet<string> {
  return new Set((registration?.allowAgentEnv ?? []).filter((name) => !isRefusedEnvName(name)));
}

/**
 * Adds what an agent asks for, only names in `allowed` (the owner's `allowAgentEnv`); returns the names
 * refused. An allowed name replaces what the base or the registration set: the owner chose to let the
 * agent decide it.
 */
export function addAgentEnv(
  target: Record<string, string>,
  extra: Record<string, string | undefined>,
  allowed: ReadonlySet<string>,
): string[] {
  const refused: string[] = [];
  for (const [name, value] of Object.entries(extra)) {
    if (!allowed.has(name)) refused.push(name);
    else if (value !== undefined) target[name] = value;
  }
  return refused;
}

export function baseChildEnv(env: ExtensionEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of BASE) {
    const value = env.get(name);
    // Exported shell functions are code: never pass them on.
    if (value !== undefined && !value.startsWith('()')) out[name] = value;
  }
  return out;
}

/** Adds `extra` to `target`, dropping refused names; returns the names dropped. */
export function addEnv(target: Record<string, string>, extra: Record<string, string | undefined>): string[] {
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(extra)) {
    if (isRefusedEnvName(name)) dropped.push(name);
    else if (value !== undefined) target[name] = value;
  }
  return dropped;
}
