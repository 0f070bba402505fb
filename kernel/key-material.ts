/**
 * Names that carry key material. Settings and agent configs never hold secrets (docs/decisions.md, "Settings hold no
 * keys"); both refuse keys whose name looks like one, while names of environment variables (`apiKeyEnv`, `*_env`,
 * `*_env_var`) never match.
 */

/** Snake-cased, lower-case key name: `botToken` → `bot_token`, `X-Api-Key` → `x_api_key`. */
const normalize = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[-\s.]+/g, '_')
    .toLowerCase();

const KEY_NAME =
  /(^|_)(api_?key|apikey|(private|secret|access|signing|encryption|client|master|auth)_?key|token|secret|password|passwd|passphrase|authorization|cookie)$/;

export const isKeyMaterialName = (name: string): boolean => KEY_NAME.test(normalize(name));
