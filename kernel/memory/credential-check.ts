/**
 * A memory never holds a credential value. Two checks, before anything is written:
 * - exact: the agent's own sealed credentials, decrypted (when the file is unlocked): a text containing
 *   one of them is refused;
 * - by shape, for keys the daemon never saw: private-key blocks and the prefixes vendors give their
 *   keys and tokens (OpenAI/Anthropic `sk-`, GitHub `ghp_`/`github_pat_`, Slack `xox?-`, AWS `AKIA`,
 *   Google `AIza`, JWTs).
 * The shape list is a safety net, not the boundary: the exact check is what the daemon knows for sure.
 */
const SHAPES: ReadonlyArray<[RegExp, string]> = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'a private key'],
  [/\bsk-(?:ant-|proj-|or-)?[A-Za-z0-9_-]{20,}/, 'an API key (sk-…)'],
  [/\b(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{40,}/, 'a GitHub token'],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/, 'a Slack token'],
  [/\bAKIA[0-9A-Z]{16}\b/, 'an AWS access key'],
  [/\bAIza[0-9A-Za-z_-]{35}\b/, 'a Google API key'],
  [/\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/, 'a JSON web token'],
];

/** Values shorter than this are too common to refuse as substrings (a 4-digit PIN would ban years). */
export const MIN_SECRET_LENGTH = 8;

/** What kind of credential `text` holds, or null. `secrets`: the values the daemon knows for this agent. */
export function credentialIn(text: string, secrets: readonly string[]): string | null {
  for (const secret of secrets) {
    if (secret.length >= MIN_SECRET_LENGTH && text.includes(secret))
      return "the value of one of the agent's credentials";
  }
  for (const [shape, what] of SHAPES) if (shape.test(text)) return what;
  return null;
}
