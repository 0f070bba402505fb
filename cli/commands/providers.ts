/**
 * `agt providers [list]`, `add <kind>` for the common cases, `remove`, `check` and `models`. A provider
 * is an entry of the settings' `providers`; its key is never written there: `apiKeyEnv` names the
 * variable the daemon reads it from. `check` and `models` go through the providers extension's routes
 * (`POST /providers/{id}/check`, `GET /providers/{id}/models`), which call the server.
 */
import { seg } from '../client.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';

interface Preset {
  type: string;
  name: string;
  /** Empty: the kind has no usual endpoint, `--base-url` is required. */
  baseUrl: string;
  apiKeyEnv?: string;
  defaultModel?: string;
}

/** The common providers: a local Ollama, and the vendors' own endpoints. */
export const PRESETS: Record<string, Preset> = {
  ollama: { type: 'openai-compatible', name: 'Ollama', baseUrl: 'http://127.0.0.1:11434/v1', defaultModel: 'llama3.2' },
  openai: { type: 'openai', name: 'OpenAI', baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' },
  anthropic: {
    type: 'anthropic',
    name: 'Anthropic',
    baseUrl: 'https://api.anthropic.com',
    apiKeyEnv: 'ANTHROPIC_API_KEY',
  },
  openrouter: {
    type: 'openrouter',
    name: 'OpenRouter',
    baseUrl: 'https://openrouter.ai/api/v1',
    apiKeyEnv: 'OPENROUTER_API_KEY',
  },
  // Any server speaking the OpenAI Chat Completions format: llama.cpp's llama-server, LM Studio, vLLM, ...
  'openai-compatible': { type: 'openai-compatible', name: 'OpenAI-compatible server', baseUrl: '' },
};

const KINDS = () => Object.keys(PRESETS).join(', ');

export interface ProviderEntry extends Preset {
  id: string;
}

export async function listProviders(ctx: Ctx): Promise<void> {
  const settings = await ctx.client.get<{ providers?: ProviderEntry[] }>('/settings');
  const providers = settings.providers ?? [];
  ctx.out.result(providers, () => {
    if (providers.length === 0)
      return ctx.out.line(ctx.out.dim(`no providers (agt providers add ${Object.keys(PRESETS).join('|')})`));
    ctx.out.table(
      ['ID', 'TYPE', 'URL', 'MODEL', 'KEY FROM'],
      providers.map((p) => [p.id, p.type, p.baseUrl, p.defaultModel ?? '-', p.apiKeyEnv ?? '-']),
    );
  });
}

export async function addProvider(
  ctx: Ctx,
  kind: string,
  options: { id?: string; name?: string; baseUrl?: string; model?: string; apiKeyEnv?: string },
): Promise<void> {
  const preset = PRESETS[kind];
  if (!preset) throw new CliError(`unknown provider kind "${kind}": one of ${KINDS()}`, EXIT.usage);
  if (!preset.baseUrl && !options.baseUrl) {
    throw new CliError(
      `the ${kind} kind needs --base-url, the server's OpenAI-compatible endpoint (llama.cpp: http://127.0.0.1:8080/v1, LM Studio: http://127.0.0.1:1234/v1, vLLM: http://127.0.0.1:8000/v1)`,
      EXIT.usage,
    );
  }
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
    ctx.out.line(
      `${replaced ? 'replaced' : 'added'} provider ${ctx.out.bold(entry.id)} (${entry.type}, ${entry.baseUrl})`,
    );
    if (entry.apiKeyEnv && !process.env[entry.apiKeyEnv])
      ctx.out.note(
        ctx.out.yellow(`the daemon reads its key from ${entry.apiKeyEnv}: set it in the daemon's environment`),
      );
  });
}

export async function removeProvider(ctx: Ctx, id: string): Promise<void> {
  const settings = await ctx.client.get<{ providers?: ProviderEntry[] }>('/settings');
  const providers = settings.providers ?? [];
  if (!providers.some((p) => p.id === id)) {
    throw new CliError(`no provider ${id} (agt providers lists them)`, EXIT.failed, {
      error: `no provider ${id}`,
      code: 'not_found',
    });
  }
  await ctx.client.request('PUT', '/settings/providers', { value: providers.filter((p) => p.id !== id) });
  ctx.out.result({ removed: id }, () =>
    ctx.out.line(
      `removed provider ${ctx.out.bold(id)} (agents that name it fail their next model call until they use another)`,
    ),
  );
}

interface CheckAnswer {
  ok: boolean;
  status: number | null;
  latencyMs?: number;
  error?: string | null;
  [key: string]: unknown;
}

/** A real call to the provider's server; exit code 1 when it did not answer as it should. */
export async function checkProvider(ctx: Ctx, id: string): Promise<number> {
  const result = await ctx.client.post<CheckAnswer>(`/providers/${seg(id)}/check`);
  ctx.out.result(result, () => {
    if (result.ok)
      ctx.out.line(
        `${ctx.out.green('ok')} ${id} answered${result.latencyMs !== undefined ? ` in ${result.latencyMs} ms` : ''}`,
      );
    else
      ctx.out.line(
        `${ctx.out.red('failed')} ${id}${result.status ? ` (HTTP ${result.status})` : ''}: ${result.error ?? 'no answer'}`,
      );
  });
  return result.ok ? EXIT.ok : EXIT.failed;
}

/** The models the provider's server lists (its `/models` endpoint, through the daemon). */
export async function listModels(ctx: Ctx, id: string): Promise<void> {
  const answer = await ctx.client.get<{ provider: string; models: Array<{ id: string; [key: string]: unknown }> }>(
    `/providers/${seg(id)}/models`,
  );
  ctx.out.result(answer.models, () => {
    if (answer.models.length === 0) return ctx.out.line(ctx.out.dim(`${id} lists no models`));
    for (const model of answer.models) ctx.out.line(model.id);
  });
}
