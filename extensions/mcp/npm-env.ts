/**
 * The environment and settings of the daemon's own npm (`POST /mcp/packages`): the owner's, never an
 * agent's. npm is the owner's tool run for the owner (no agent can start an install or set anything
 * here), so it gets what npm needs to reach a registry the way the owner's own `npm install` does:
 * - the base allow-list of every child (PATH, HOME, locale, temp dir: `child-env.ts`);
 * - the owner's TLS trust and proxy variables (a TLS-inspecting proxy's CA in `NODE_EXTRA_CA_CERTS`,
 *   `SSL_CERT_FILE`, `HTTPS_PROXY`, ...), which npm and Node read;
 * - every `npm_config_*` variable (npm's own settings by environment: registry, cafile, strict-ssl,
 *   proxy, cache, userconfig, ...); what decides the install itself (`--prefix`, `--ignore-scripts`,
 *   `--global=false`) is given on the command line, which wins over them;
 * - the owner's npmrc files: the user's (`~/.npmrc`, through HOME or `npm_config_userconfig`) and the
 *   global one, named by `--globalconfig` because `--prefix` would otherwise move it under `mcp-servers/`.
 * Agents' variables never reach it: an agent's `env`/`env_keys` belong to its MCP servers' children.
 */
import { execFile } from 'node:child_process';
import type { ExtensionEnv } from '@agt/contracts';
import { baseChildEnv } from './child-env.js';

/** Variables of TLS trust and proxies that npm (or the Node.js it runs on) reads. */
const NETWORK = [
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_TLS_REJECT_UNAUTHORIZED',
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'NO_PROXY',
  'no_proxy',
];

/** npm reads `npm_config_<key>` in any case (`NPM_CONFIG_REGISTRY` too). */
const NPM_CONFIG = /^npm_config_[a-z0-9_-]+$/i;

/** What the daemon's npm child gets from the daemon's environment (`names`: every variable the daemon has). */
export function npmChildEnv(env: ExtensionEnv, names: readonly string[]): Record<string, string> {
  const out = baseChildEnv(env);
  for (const name of [...NETWORK, ...names.filter((candidate) => NPM_CONFIG.test(candidate))]) {
    const value = env.get(name);
    if (value !== undefined && !value.startsWith('()')) out[name] = value;
  }
  return out;
}

/**
 * The global npmrc npm would read without `--prefix` (`<global prefix>/etc/npmrc`, or the owner's
 * `npm_config_globalconfig`), asked from npm itself with the same environment so it is npm's own answer.
 * Undefined when npm cannot say (then npm's default applies).
 */
export function globalNpmrc(env: Record<string, string>, cwd: string, timeoutMs = 10_000): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['config', 'get', 'globalconfig', '--no-update-notifier'],
      { env, cwd, timeout: timeoutMs },
      (error, stdout) => {
        const path = String(stdout ?? '')
          .trim()
          .split('\n')
          .at(-1)
          ?.trim();
        resolve(!error && path && path.startsWith('/') ? path : undefined);
      },
    );
  });
}
