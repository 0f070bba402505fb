/**
 * Vendor SDK clients, built per attempt around the attempt's guard `fetch`: since issue 31 only for the
 * admin calls (admin.ts: listing a provider's models, where the SDKs' typed pagination is worth their
 * cost); model calls go through wire-http.ts, which sends the same headers as pinned below.
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
 *
 * Each SDK is imported the first time a call needs it (~170 ms and ~10 MB each), not when the daemon
 * starts: a daemon whose providers are all OpenAI-style never loads the Anthropic SDK.
 */
import type OpenAI from 'openai';
import type Anthropic from '@anthropic-ai/sdk';
import type { ProviderTarget } from './types.js';

type OpenAISdk = typeof import('openai');
type AnthropicSdk = typeof import('@anthropic-ai/sdk');

let openaiSdk: OpenAISdk | undefined;
let anthropicSdk: AnthropicSdk | undefined;

/** The SDK modules imported so far (their error classes are what a failed call can have thrown). */
export function loadedSdks(): Array<OpenAISdk | AnthropicSdk> {
  return [openaiSdk, anthropicSdk].filter((sdk): sdk is OpenAISdk | AnthropicSdk => sdk !== undefined);
}

export const ANTHROPIC_VERSION = '2023-06-01';
const PLACEHOLDER = 'no-key-configured';

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export async function openaiClient(target: ProviderTarget, fetch: Fetch, timeoutMs: number): Promise<OpenAI> {
  openaiSdk ??= await import('openai');
  return new openaiSdk.OpenAI({
    apiKey: target.apiKey ?? PLACEHOLDER,
    // null: never read from the daemon's environment (OPENAI_ORG_ID and the like).
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

export async function anthropicClient(target: ProviderTarget, fetch: Fetch, timeoutMs: number): Promise<Anthropic> {
  anthropicSdk ??= await import('@anthropic-ai/sdk');
  return new anthropicSdk.Anthropic({
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
