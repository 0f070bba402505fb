/**
 * What the GenAI semantic conventions call the provider: `gen_ai.provider.name` is the well-known system
 * (`openai`, `anthropic`, `groq`, ...), never the owner's provider id (that is `agt.provider.id`), and
 * `server.address` / `server.port` are the endpoint's. Read from the provider's declaration: the agent's own
 * providers first, then the settings' (the order the providers extension resolves them in).
 */
import type { AgentView, Settings } from '@agt/contracts';

export interface GenAiProvider {
  /** `gen_ai.provider.name`. */
  name: string;
  address?: string;
  port?: number;
}

/** Hosts of well-known systems reached over an OpenAI-compatible or other API. */
const HOSTS: Array<[RegExp, string]> = [
  [/(^|\.)api\.openai\.com$/, 'openai'],
  [/\.openai\.azure\.com$/, 'azure.ai.openai'],
  [/\.services\.ai\.azure\.com$|\.inference\.ai\.azure\.com$/, 'azure.ai.inference'],
  [/(^|\.)api\.anthropic\.com$/, 'anthropic'],
  [/(^|\.)api\.groq\.com$/, 'groq'],
  [/(^|\.)api\.deepseek\.com$/, 'deepseek'],
  [/(^|\.)api\.mistral\.ai$/, 'mistral_ai'],
  [/(^|\.)api\.x\.ai$/, 'x_ai'],
  [/(^|\.)api\.perplexity\.ai$/, 'perplexity'],
  [/(^|\.)api\.cohere\.(ai|com)$/, 'cohere'],
  [/^generativelanguage\.googleapis\.com$/, 'gcp.gemini'],
  [/aiplatform\.googleapis\.com$/, 'gcp.vertex_ai'],
  [/^bedrock-runtime\..*\.amazonaws\.com$/, 'aws.bedrock'],
  [/(^|\.)openrouter\.ai$/, 'openrouter'],
];
/** Ollama's port: its OpenAI-compatible endpoint is an Ollama server. */
const OLLAMA_PORT = 11434;

/**
 * The system a provider of kind `type` at `baseUrl` is, by best knowledge: the kind when it names one
 * (`anthropic`, `openrouter`), else the host's system, else `ollama` on Ollama's port, else `openai` (the
 * API flavor of every OpenAI-compatible server, as the conventions advise).
 */
export function genAiProviderName(type: string, baseUrl: string): string {
  const url = parse(baseUrl);
  const host = url?.hostname.toLowerCase() ?? '';
  const known = HOSTS.find(([pattern]) => pattern.test(host))?.[1];
  if (type === 'anthropic' || type === 'openrouter') return type;
  if (known) return known;
  if (type === 'openai' || type === 'openai-compatible')
    return url && portOf(url) === OLLAMA_PORT ? 'ollama' : 'openai';
  return type;
}

/** The provider `providerId` as the agent `agentId` resolves it; undefined when neither declares it. */
export function resolveProvider(
  agent: AgentView | undefined,
  settings: Readonly<Settings>,
  providerId: string,
): GenAiProvider | undefined {
  const declared =
    agent?.config.providers?.find((p) => p.id === providerId) ?? settings.providers?.find((p) => p.id === providerId);
  if (!declared) return undefined;
  const url = parse(declared.baseUrl);
  return {
    name: genAiProviderName(declared.type, declared.baseUrl),
    ...(url ? { address: url.hostname.replace(/^\[|\]$/g, ''), port: portOf(url) } : {}),
  };
}

/**
 * The span attributes of a provider: the system (`_OTHER` when the id is declared nowhere any more), the id,
 * and with `endpoint` the server's address and port (model calls: client spans).
 */
export function providerAttributes(
  providerId: string,
  provider: GenAiProvider | undefined,
  endpoint: boolean,
): Record<string, string | number> {
  return {
    'gen_ai.provider.name': provider?.name ?? '_OTHER',
    'agt.provider.id': providerId,
    ...(endpoint && provider?.address ? { 'server.address': provider.address } : {}),
    ...(endpoint && provider?.address && provider.port ? { 'server.port': provider.port } : {}),
  };
}

function parse(baseUrl: string): URL | undefined {
  try {
    return new URL(baseUrl);
  } catch {
    return undefined;
  }
}

const portOf = (url: URL) => (url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80);
