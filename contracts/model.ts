/**
 * The model-client extension point (filled by the `providers` extension, or a third party).
 *
 * Combination rule: the kernel asks each registered {@link ModelClientProvider} in extension load
 * order; the first that returns a client for the agent's `model.provider` wins. One that throws does
 * not stop the others; the first error ends the turn only when none returns a client.
 */
import type { UsageCounts } from './events.js';

/**
 * An image a tool hands back, for models that take images (base64, never a URL to fetch). Declared with the
 * model's messages, which carry it; `ToolResult.images` hands it over.
 *
 * @public
 */
export interface ToolImage {
  /** `image/png`, `image/jpeg`, `image/gif` or `image/webp`; other types are described in text instead. */
  mimeType: string;
  /** Base64 of the bytes. */
  data: string;
}

/** @public */
export interface ModelParam {
  key: string;
  value: string;
}

/**
 * The model part of an agent's config (schema `ModelConfig`).
 *
 * @public
 */
export interface ModelSettings {
  provider: string;
  model_id: string;
  temperature?: number | null;
  max_tokens?: number | null;
  top_p?: number | null;
  reasoning?: Record<string, unknown>;
  params?: ModelParam[];
  provider_params?: Record<string, unknown>;
}

/** @public */
export interface ToolCall {
  /** The provider's call id; echoed back in the matching tool result. */
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/**
 * Opaque reasoning a provider returned with an assistant message (Anthropic `thinking` and
 * `redacted_thinking` blocks, with their signatures). Never shown as text. The runtime stores it with
 * the assistant message and hands it back unchanged in later requests: Anthropic refuses to continue a
 * tool-use exchange without the thinking blocks when thinking is on. Other providers ignore it.
 *
 * @public
 */
export type ReasoningBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

/** @public */
export type ModelMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[]; reasoning?: ReasoningBlock[] }
  | {
      role: 'tool';
      toolCallId: string;
      name: string;
      content: string;
      isError?: boolean;
      /**
       * Images the tool returned (see `ToolResult.images`): sent in the provider's own way, or left out by a client
       * that cannot.
       */
      images?: ToolImage[];
    };

/**
 * A tool as the model sees it.
 *
 * @public
 */
export interface ModelTool {
  name: string;
  description: string;
  /** JSON Schema of the input object. */
  inputSchema: Record<string, unknown>;
}

/** @public */
export interface ModelRequest {
  agentId: string;
  model: ModelSettings;
  system: string;
  messages: ModelMessage[];
  tools: ModelTool[];
  /** Aborted when the turn is interrupted, aborted or unloaded: the HTTP request must be cancelled. */
  signal: AbortSignal;
  /**
   * The turn and loop the call serves (the spend governor's `turn_tokens` budget and ledger); absent outside a turn.
   */
  turnId?: string;
  loop?: string;
  /** What the call is for, recorded in the usage ledger: `turn` (default) or `compaction`. */
  purpose?: 'turn' | 'compaction' | (string & {});
  /** Streamed text deltas while the call runs. Must not throw. */
  onDelta?: (text: string) => void;
}

/** @public */
export type StopReason = 'end' | 'tool_use' | 'max_tokens' | 'other';

/** @public */
export interface ModelResponse {
  text: string;
  toolCalls: ToolCall[];
  stopReason: StopReason;
  usage: UsageCounts;
  /** USD, or null when the price of the model is not known. */
  cost: number | null;
  /** The provider id and model id that answered. */
  provider: string;
  model: string;
  /** The vendor's id of this completion (`chatcmpl-…`, `msg_…`), when it sent one. */
  responseId?: string;
  /** Reasoning blocks to store with the assistant message and send back next time (see {@link ReasoningBlock}). */
  reasoning?: ReasoningBlock[];
}

/**
 * One configured model endpoint. `complete` must honour `signal`, apply its own timeout and retries,
 * and reject with an `AgtError` (`upstream_error` with `details.upstreamStatus`, `timeout`,
 * `unavailable`) rather than hang or resolve with partial data.
 *
 * The `providers` extension's clients stream when `onDelta` is given (plain JSON otherwise), retry
 * 408/429/5xx and connection failures with backoff honouring `Retry-After`, and reject with:
 * `upstream_error` (details `{provider, upstreamStatus}`: the vendor's status, or null when it was never
 * reached; a malformed, cut or truncated reply, or a tool call whose arguments are not JSON),
 * `timeout` (the attempt's total or idle timeout), `aborted` (status 499: `signal` fired; the HTTP
 * request was really cancelled), `unavailable` (the extension is stopping). Messages never carry keys.
 *
 * @public
 */
export interface ModelClient {
  complete(request: ModelRequest): Promise<ModelResponse>;
  /**
   * Embeddings of `input` (OpenAI-format servers: `POST /v1/embeddings`), one vector per input, in
   * order. Absent when the provider cannot embed. Called by the kernel's memory (docs/memory.md); it
   * rejects as `complete` does. Must not log the input.
   *
   * @beta
   */
  embed?(request: EmbeddingRequest): Promise<EmbeddingResponse>;
}

/**
 * One embeddings call (`ModelClient.embed`).
 *
 * @beta
 */
export interface EmbeddingRequest {
  /** The embedding model's id at the provider. */
  model: string;
  /** The texts to embed, in order. */
  input: string[];
  /** The width asked for (models that can shorten their vectors, such as text-embedding-3-*). */
  dimensions?: number;
  /** Aborted when the caller gives up (a turn stopped, a timeout): the HTTP request must be cancelled. */
  signal: AbortSignal;
  /** The turn and loop the call serves (the spend governor's ledger); absent outside a turn. */
  turnId?: string;
  loop?: string;
}

/**
 * The answer of `ModelClient.embed`.
 *
 * @beta
 */
export interface EmbeddingResponse {
  /** One vector per input, in the inputs' order. */
  vectors: number[][];
  /** Input tokens the provider counted (0 when it said nothing). */
  inputTokens: number;
  /** The model id the provider says answered. */
  model: string;
}

/**
 * Per-agent provider declaration (schema `AgentProviderConfig`).
 *
 * @public
 */
export interface AgentProviderDeclaration {
  id: string;
  type: string;
  name: string;
  baseUrl: string;
  preset?: string;
  defaultModel?: string;
  params?: ModelParam[];
  requestDelayMs?: number;
}

/** @public */
export interface ModelResolveContext {
  agentId: string;
  /** The agent's own `providers` declarations. */
  agentProviders: AgentProviderDeclaration[];
  /**
   * Reads one of the agent's sealed credentials (for per-agent provider keys); undefined when unset.
   * The `providers` extension reads the key of the agent's provider `<id>` as credential `provider:<id>`
   * (for example `provider:custom:my-proxy`).
   */
  readCredential(name: string): Promise<string | undefined>;
}

/** @public */
export interface ModelClientProvider {
  /**
   * Returns a client for `providerId` (an app provider id or one of the agent's own), or undefined when
   * this contributor does not know it. Throw (an {@link AgtError}) when it knows the id but cannot serve
   * it (say, a provider type it does not support): later contributors are still asked, and the error
   * ends the turn only when none serves the id. Called once per model call: keep it cheap.
   */
  resolve(providerId: string, context: ModelResolveContext): Promise<ModelClient | undefined> | ModelClient | undefined;
}
