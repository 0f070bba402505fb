/**
 * `agt providers [list]` and `agt providers add <kind>` for the common cases. A provider is an entry
 * of the settings' `providers` (D2); its key is never written there: `apiKeyEnv` names the variable
 * the daemon reads it from.
 */
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';

interface Preset {
  type: string;
  name: string;
  baseUrl: string;
  apiKeyEnv?: string;
  defaultModel?: string;
}

/** The common providers: a local Ollama, and the vendors' own endpoints. */
export const PRESETS: Record<string, Preset> = {
  ollama: { type: 'openai-compatible', name: 'Ollama', baseUrl: 'http://127.0.0.1:11434/v1', defaultModel: 'llama3.2' },
  openai: { type: 'openai', name: 'OpenAI', baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' },
  anthropic: { type: 'anthropic', name: 'Anthropic', baseUrl: 'https://api.anthropic.com', apiKeyEnv: 'ANTHROPIC_API_KEY' },
  openrouter: { type: 'openrouter', name: 'OpenRouter', baseUrl: 'https://openrouter.ai/api/v1', apiKeyEnv: 'OPENROUTER_API_KEY' },
};

interface ProviderEntry extends Preset {
  id: string;
}

export async function listProviders(ctx: Ctx): Promise<void> {
  const settings = await ctx.client.get<{ providers?: ProviderEntry[] }>('/settings');
  const providers = settings.providers ?? [];
  ctx.out.result(providers, () => {
    if (providers.length === 0) return ctx.out.line(ctx.out.dim('no providers (agt providers add ollama|openai|anthropic|openrouter)'));
    ctx.out.table(['ID', 'TYPE', 'URL', 'MODEL', 'KEY FROM'], providers.map((p) => [p.id, p.type, p.baseUrl, p.defaultModel ?? '-', p.apiKeyEnv ?? '-']));
  });
}

export async function addProvider(ctx: Ctx, kind: string, options: { id?: string; name?: string; baseUrl?: string; model?: string; apiKeyEnv?: string }): Promise<void> {
  const preset = PRESETS[kind];
  if (!preset) throw new CliError(`unknown provider kind "${kind}": one of ${Object.keys(PRESETS).join(', ')}`, EXIT.usage);
  const entry: ProviderEntry = { id: options.id ?? kind, ...preset };
  if (options.name) entry.name = options.name;
  if (options.baseUrl) entry.baseUrl = options.baseUrl;
  if (options.model) entry.defaultModel = options.model;
  if (options.apiKeyEnv) entry.apiKeyEnv = options.apiKeyEnv;
  const settings = await ctx.client.get<{ providers?: ProviderEntry[] }>('/settings');
  const others = (settings.providers ?? []).filter((p) => p.id !== entry.id);
  const replaced = others.length !== (settings.providers ?? []).length;
  await ctx.client.request('PUT', '/settings/providers', { value: [...others, entry] });
  ctx.out.result(entry, () => {
    ctx.out.line(`${replaced ? 'replaced' : 'added'} provider ${ctx.out.bold(entry.id)} (${entry.type}, ${entry.baseUrl})`);
    if (entry.apiKeyEnv && !process.env[entry.apiKeyEnv]) ctx.out.note(ctx.out.yellow(`the daemon reads its key from ${entry.apiKeyEnv}: set it in the daemon's environment`));
  });
}
