/** Types shared inside the providers extension (not part of the public contract). */
import type { ModelParam } from '@agt/contracts';

export type ProviderKind = 'anthropic' | 'openai' | 'openai-compatible' | 'openrouter';

export const PROVIDER_KINDS: readonly ProviderKind[] = ['anthropic', 'openai', 'openai-compatible', 'openrouter'];

/** Whether this extension serves `type` (settings accept any kind name: the kernel does not know the kinds). */
export const isProviderKind = (type: string): type is ProviderKind =>
  (PROVIDER_KINDS as readonly string[]).includes(type);

/**
 * One provider ready to be called: where it was declared, its endpoint, its key (held in memory only,
 * never logged or returned) and the limits that apply to its calls.
 */
export interface ProviderTarget {
  origin: 'app' | 'agent';
  id: string;
  type: ProviderKind;
  name: string;
  baseUrl: string;
  defaultModel?: string;
  apiKey?: string;
  /** Provider-level default `params` (agent declarations); the model's own `params` win. */
  params: ModelParam[];
  requestDelayMs: number;
  timeoutMs: number;
  idleTimeoutMs: number;
  maxRetries: number;
  /** Identity of the `requestDelayMs` gate: `app:<id>` or `agent:<agentId>:<id>`. */
  gateKey: string;
}

/** Kinds whose public endpoints always want a key (an `openai-compatible` server often needs none). */
export const KEY_REQUIRED: Record<ProviderKind, boolean> = {
  anthropic: true,
  openai: true,
  'openai-compatible': false,
  openrouter: true,
};
