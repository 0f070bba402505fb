/**
 * Secret values never appear in an agent config (docs/agent-files.md#no-secrets-in-config): a config is readable by the
 * agent itself (`sys_get_config`), by every API client (`GET /agents/{id}/config`) and by anyone who copies the file.
 * Keys go in sealed credentials (`PUT /agents/{id}/credentials/{name}`) or stay in the daemon's environment, named by
 * the config (`env_keys`, `header_env`, `bearer_token_env_var`, `apiKeyEnv`).
 *
 * {@link findConfigSecret} finds the first place a config carries one. The rules (the same key-name
 * idea as the settings, `kernel/key-material.ts`):
 * - any key, anywhere, whose name looks like key material (`api_key`, `apiKey`, `token`, `bot_token`,
 *   `access_token`, `secret`, `client_secret`, `password`, `passphrase`, `private_key`, ...) holding a
 *   non-empty string; booleans and objects are not values (`env_schema` entries say `secret: true`, tool
 *   schemas have `password` properties), and names of environment variables (`*_env`, `*_env_var`,
 *   `env_keys`, `header_env`, `apiKeyEnv`) never match;
 * - `{key, value}` pairs (`model.params`, providers' `params`) whose `key` looks like key material;
 * - MCP `headers` named `Authorization`, `Proxy-Authorization`, `Cookie`, `X-Api-Key`, `*-Token`, `*-Key`;
 * - MCP `env` entries whose name contains KEY, TOKEN, SECRET, PASSWORD or PASSPHRASE.
 * Empty strings are placeholders, not secrets, and pass.
 */
import { findInJson } from '../json-walk.js';
import { isKeyMaterialName } from '../key-material.js';

export interface ConfigSecret {
  /** JSON pointer of the offending value, e.g. `/mcp/servers/0/headers/Authorization`. */
  path: string;
  /** What to use instead. */
  hint: string;
}

const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-api-key']);
const isSecretHeader = (name: string) => {
  const lower = name.toLowerCase();
  return SECRET_HEADERS.has(lower) || /[-_](token|key)$/.test(lower) || isKeyMaterialName(name);
};

const SECRET_ENV = /KEY|TOKEN|SECRET|PASSWORD|PASSPHRASE/i;

const isValue = (value: unknown) => typeof value === 'string' && value.trim() !== '';
const pointer = (segment: string | number) => String(segment).replace(/~/g, '~0').replace(/\//g, '~1');

const GENERAL_HINT =
  'store it as a sealed credential (PUT /agents/{id}/credentials/{name}) or keep it in the daemon environment and name the variable (apiKeyEnv, *_env)';
const HEADER_HINT =
  'name an environment variable with header_env or bearer_token_env_var, or store a sealed credential (PUT /agents/{id}/credentials/{name})';
const ENV_HINT =
  'list the variable in env_keys (its value comes from the daemon environment or a sealed credential of the agent) instead of writing it in env';

/** The first secret value the config carries, or null. */
export function findConfigSecret(config: unknown): ConfigSecret | null {
  const servers = (config as { mcp?: { servers?: unknown } } | null)?.mcp?.servers;
  if (Array.isArray(servers)) {
    for (const [index, server] of servers.entries()) {
      if (!server || typeof server !== 'object') continue;
      const { headers, env } = server as { headers?: unknown; env?: unknown };
      for (const [name, value] of entries(headers)) {
        if (isSecretHeader(name) && isValue(value))
          return { path: `/mcp/servers/${index}/headers/${pointer(name)}`, hint: HEADER_HINT };
      }
      for (const [name, value] of entries(env)) {
        if ((SECRET_ENV.test(name) || isKeyMaterialName(name)) && isValue(value))
          return { path: `/mcp/servers/${index}/env/${pointer(name)}`, hint: ENV_HINT };
      }
    }
  }
  const path = walk(config, '');
  return path === null ? null : { path, hint: GENERAL_HINT };
}

function entries(value: unknown): Array<[string, unknown]> {
  return value && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value) : [];
}

/** The first general secret value, in document order (iterative: see kernel/json-walk.ts). */
function walk(value: unknown, path: string): string | null {
  return findInJson<string>(
    value,
    {
      object: (object, at) =>
        typeof object.key === 'string' && isKeyMaterialName(object.key) && isValue(object.value) ? `${at}/value` : null,
      entry: (key, inner, at) => (isKeyMaterialName(key) && isValue(inner) ? at : null),
    },
    pointer,
    path,
  );
}
