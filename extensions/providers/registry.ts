/**
 * Where providers come from and how a model call finds one.
 *
 * Resolution (the {@link ModelClientProvider} contributed to the kernel): the agent's own `providers`
 * declarations first, then the app providers of the settings. An agent-declared provider uses only the
 * agent's sealed credential `provider:<id>`, never an app key: an agent file written elsewhere could
 * point a declaration named like an app provider at its own server and collect the key.
 *
 * App keys are read from `process.env[apiKeyEnv]` on every resolve, so a settings change (new
 * `apiKeyEnv`, new provider) applies to the next call without a restart.
 *
 * The settings accept any provider `type` (the kernel does not know the kinds); a provider of a kind
 * this extension does not serve is listed as `unsupported_type`, and checking it, listing its models or
 * resolving it for a model call fails with 422 `unsupported_provider_type` naming the kinds it serves.
 */
import type { AgentProviderDeclaration, ModelClientProvider } from '@agt/contracts';
import type { SettingsService } from '@agt/contracts';
import type { AppProviderSettings } from '@agt/contracts';
import { unsupportedType } from './errors.js';
import { createModelClient, type ClientRuntime } from './model-client.js';
import { isProviderKind, KEY_REQUIRED, type ProviderTarget } from './types.js';

/** The credential name under which an agent's key for its provider `<id>` is sealed. */
export const credentialName = (providerId: string) => `provider:${providerId}`;

export interface CheckResult {
  ok: boolean;
  /** The upstream HTTP status, or null when the provider was not reached. */
  status: number | null;
  latencyMs: number;
  method: 'models' | 'completion';
  error?: string;
  checkedAt: number;
}

export type ProviderStatus = 'unchecked' | 'reachable' | 'unreachable' | 'missing_key' | 'unsupported_type';

export class ProviderRegistry {
  /** Last check of each app provider, keyed by id and dropped when that provider's settings change. */
  private readonly checks = new Map<string, { fingerprint: string; result: CheckResult }>();

  constructor(
    private readonly settings: SettingsService,
    private readonly runtime: ClientRuntime,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  appProviders(): AppProviderSettings[] {
    return [...(this.settings.current().providers ?? [])];
  }

  findApp(id: string): AppProviderSettings | undefined {
    return this.appProviders().find((p) => p.id === id);
  }

  /** The key of an app provider, or undefined (unset, empty, or no `apiKeyEnv`). Never log it. */
  appKey(provider: AppProviderSettings): string | undefined {
    const value = provider.apiKeyEnv ? this.env[provider.apiKeyEnv]?.trim() : undefined;
    return value ? value : undefined;
  }

  /** Throws {@link unsupportedType} for a kind this extension does not serve. */
  appTarget(provider: AppProviderSettings): ProviderTarget {
    if (!isProviderKind(provider.type)) throw unsupportedType(provider.id, provider.type);
    const { options } = this.runtime;
    return {
      origin: 'app',
      id: provider.id,
      type: provider.type,
      name: provider.name,
      baseUrl: provider.baseUrl,
      defaultModel: provider.defaultModel,
      apiKey: this.appKey(provider),
      params: [],
      requestDelayMs: provider.requestDelayMs ?? 0,
      timeoutMs: provider.timeoutMs ?? options.timeoutMs,
      idleTimeoutMs: Math.min(options.idleTimeoutMs, provider.timeoutMs ?? options.timeoutMs),
      maxRetries: provider.maxRetries ?? options.maxRetries,
      gateKey: `app:${provider.id}`,
    };
  }

  /** Undefined for a declaration whose `type` is not one of the four kinds. */
  agentTarget(
    agentId: string,
    declaration: AgentProviderDeclaration,
    apiKey: string | undefined,
  ): ProviderTarget | undefined {
    if (!isProviderKind(declaration.type)) return undefined;
    const { options } = this.runtime;
    return {
      origin: 'agent',
      id: declaration.id,
      type: declaration.type,
      name: declaration.name,
      baseUrl: declaration.baseUrl,
      defaultModel: declaration.defaultModel,
      apiKey: apiKey || undefined,
      params: declaration.params ?? [],
      requestDelayMs: declaration.requestDelayMs ?? 0,
      timeoutMs: options.timeoutMs,
      idleTimeoutMs: options.idleTimeoutMs,
      maxRetries: options.maxRetries,
      gateKey: `agent:${agentId}:${declaration.id}`,
    };
  }

  /** The extension point handed to `ctx.contribute.modelClients`. */
  clientProvider(): ModelClientProvider {
    return {
      resolve: async (providerId, context) => {
        const declared = context.agentProviders.find((p) => p.id === providerId);
        if (declared) {
          const key = await context.readCredential(credentialName(declared.id));
          const target = this.agentTarget(context.agentId, declared, key);
          if (!target) throw unsupportedType(declared.id, declared.type);
          return createModelClient(target, this.runtime);
        }
        const app = this.findApp(providerId);
        return app ? createModelClient(this.appTarget(app), this.runtime) : undefined;
      },
    };
  }

  recordCheck(provider: AppProviderSettings, result: CheckResult): void {
    this.checks.set(provider.id, { fingerprint: JSON.stringify(provider), result });
  }

  lastCheck(provider: AppProviderSettings): CheckResult | null {
    const entry = this.checks.get(provider.id);
    return entry && entry.fingerprint === JSON.stringify(provider) ? entry.result : null;
  }

  /** `unsupported_type` and `missing_key` first (a call cannot succeed), then the last check's outcome. */
  status(provider: AppProviderSettings): ProviderStatus {
    if (!isProviderKind(provider.type)) return 'unsupported_type';
    const keyMissing = provider.apiKeyEnv ? !this.appKey(provider) : KEY_REQUIRED[provider.type];
    if (keyMissing) return 'missing_key';
    const check = this.lastCheck(provider);
    return check === null ? 'unchecked' : check.ok ? 'reachable' : 'unreachable';
  }

  /** Settings changed: forget checks of providers that are gone (changed ones no longer match). */
  settingsChanged(): void {
    const ids = new Set(this.appProviders().map((p) => p.id));
    for (const id of this.checks.keys()) if (!ids.has(id)) this.checks.delete(id);
  }
}
