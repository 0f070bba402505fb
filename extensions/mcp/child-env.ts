/**
 * The environment of an MCP server's child process, built from an allow-list: a few variables a program
 * needs to run (PATH, HOME, locale, temp dir) taken from the daemon's environment, then what the
 * registration and the declaration add. Nothing else is inherited, so `NODE_OPTIONS`, `LD_PRELOAD` and
 * the daemon's `AGT_*` never reach a child; those names (and `LD_*`, `DYLD_*`) are also refused when a
 * registration or an agent names them. What an agent file adds (its declaration's `env`, `env_keys`)
 * never replaces a variable already set (so not `PATH` or `HOME`), and never names an interpreter's
 * start-up hook (`NODE_PATH`, `PYTHONSTARTUP`, `BASH_ENV`, ...): it would be an untrusted file choosing
 * code the owner's program loads.
 */
import type { ExtensionEnv } from '@agt/contracts/extension';

const BASE = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'SYSTEMROOT'];

/** Names that change how a child loads code, or that belong to the daemon. */
export function isRefusedEnvName(name: string): boolean {
  return /^(AGT_|LD_|DYLD_)/.test(name) || name === 'NODE_OPTIONS' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
}

/** Variables through which a runtime loads extra code at start; an agent file may not set them. */
const INTERPRETER_HOOKS = new Set([
  'NODE_PATH', 'NODE_EXTRA_CA_CERTS', 'PYTHONPATH', 'PYTHONSTARTUP', 'PYTHONHOME', 'PYTHONUSERBASE', 'BASH_ENV', 'ENV',
  'PERL5OPT', 'PERL5LIB', 'PERLLIB', 'RUBYOPT', 'RUBYLIB', 'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS',
  'CLASSPATH', 'GIT_EXEC_PATH', 'GIT_SSH_COMMAND', 'IFS', 'PROMPT_COMMAND', 'NPM_CONFIG_NODE_OPTIONS',
]);

/** Adds what an agent file asks for: never over a variable already set, never an interpreter hook. */
export function addAgentEnv(target: Record<string, string>, extra: Record<string, string | undefined>): string[] {
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(extra)) {
    if (isRefusedEnvName(name) || INTERPRETER_HOOKS.has(name.toUpperCase()) || name.toLowerCase().startsWith('npm_config_') || name in target) dropped.push(name);
    else if (value !== undefined) target[name] = value;
  }
  return dropped;
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
