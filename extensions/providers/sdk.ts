/**
 * Vendor SDK clients, built per attempt around the attempt's guard `fetch`.
 *
 * The SDKs do the wire work (URLs, headers, JSON, SSE parsing, typed errors); this file pins what they
 * would otherwise take from the environment or decide on their own:
 * - `maxRetries: 0`: retries are ours (retry.ts). Measured reasons: the SDKs' backoff base (0.5 s) and
 *   cap (8 s) are fixed, a `Retry-After` above 60 s is replaced by their own short backoff (a
 *   rate-limited vendor gets hammered), and they also retry 409.
 * - Keys and base URLs are always passed explicitly, and the env-derived extras (`OPENAI_ORG_ID`,
 *   `OPENAI_PROJECT_ID`, admin keys, `ANTHROPIC_AUTH_TOKEN`, credential profiles) are switched off: a
 *   provider's key comes only from its `apiKeyEnv` or the agent's sealed credential.
 * - `logLevel: 'off'`: the SDKs would print to the console (including the text of malformed chunks).
 * - Anthropic: `@anthropic-ai/sdk` 1.x sends `Authorization: Bearer` and `anthropic-version: 2026-10-21`;
 *   decision D8 fixes the wire format at `x-api-key` and `anthropic-version: 2023-06-01`, so both
 *   headers are set here and the bearer header is removed.
 * - No key (a local openai-compatible server): the SDK insists on one, so a placeholder is given and
 *   the `Authorization` header is removed (D8: sent only when a key is set).
 */
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { ProviderTarget } from './types.js';

export const ANTHROPIC_VERSION = '2023-06-01';
const PLACEHOLDER = 'no-key-configured';

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export function openaiClient(target: ProviderTarget, fetch: Fetch, timeoutMs: number): OpenAI {
  return new OpenAI({
    apiKey: target.apiKey ?? PLACEHOLDER,
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    baseURL: target.baseUrl.replace(/\/+$/, ''),
    maxRetries: 0,
    timeout: timeoutMs,
    fetch,
    logLevel: 'off',
    defaultHeaders: target.apiKey ? {} : { Authorization: null },
  });
}

export function anthropicClient(target: ProviderTarget, fetch: Fetch, timeoutMs: number): Anthropic {
  return new Anthropic({
    apiKey: target.apiKey ?? PLACEHOLDER,
    webhookKey: null,
    baseURL: target.baseUrl.replace(/\/+$/, ''),
    maxRetries: 0,
    timeout: timeoutMs,
    fetch,
    logLevel: 'off',
    defaultHeaders: { 'anthropic-version': ANTHROPIC_VERSION, authorization: null, 'x-api-key': target.apiKey ?? null },
  });
}
