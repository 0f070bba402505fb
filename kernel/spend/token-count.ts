/**
 * Prompt tokens for the spend governor's reservation (docs/costs.md, "Reservation"), counted with the
 * model family's own tokenizer where a library has one: OpenAI's `o200k_base` and `cl100k_base`
 * (`gpt-tokenizer`) and Claude's (`ai-tokenizer`'s `claude` encoding, checked by its authors against
 * Claude 3 and 4 answers; `@anthropic-ai/tokenizer` is Claude 2's and needs WASM). Other families count
 * 3 characters a token. An image counts {@link IMAGE_TOKENS} (its base64 is not text the model reads).
 *
 * Counting runs on a worker thread (`token-count-worker.ts`): importing an encoding evaluates 1-2.5 MB of
 * rank tables (100-200 ms) and counting takes ~70 ms a megabyte of prompt, either of which would stall
 * the event loop. The worker starts on the first count (the governor counts only when a budget applies),
 * and ends after {@link IDLE_MS} without work, giving its 50-120 MB back. A count it cannot give (it
 * failed, or took over {@link COUNT_TIMEOUT_MS}) is the 3-characters estimate.
 */
import { Worker } from 'node:worker_threads';
import type { ModelRequest } from '@agt/contracts';

/** The encodings the worker knows. */
export type TokenFamily = 'o200k' | 'cl100k' | 'claude';

export interface TokenCountRequest {
  id: number;
  family: TokenFamily;
  pieces: string[];
}

export type TokenCountReply = { id: number; tokens: number } | { id: number; error: string };

/** What an image is reserved at: about the most Anthropic and OpenAI bill one (resized) image. */
export const IMAGE_TOKENS = 1_600;
/** Characters a token where no tokenizer is known (denser than chars / 4: code and JSON run ~2.5). */
export const FALLBACK_CHARS_PER_TOKEN = 3;
export const COUNT_TIMEOUT_MS = 10_000;
export const IDLE_MS = 60_000;

/**
 * The tokenizer family of a model, by its provider kind and id (an OpenRouter-style `vendor/model` id by
 * its part after the slash); null when none is known.
 */
export function tokenFamily(kind: string | undefined, modelId: string): TokenFamily | null {
  const id = modelId.toLowerCase();
  const name = id.slice(id.lastIndexOf('/') + 1);
  if (kind === 'anthropic' || name.includes('claude')) return 'claude';
  if (/^(gpt-4o|gpt-4\.|gpt-5|gpt-oss|o[1-9]|chatgpt|codex)/.test(name)) return 'o200k';
  if (/^(gpt-4|gpt-3\.5)/.test(name)) return 'cl100k';
  return kind === 'openai' ? 'o200k' : null;
}

/** What a call sends as text (system, tool schemas, each message as JSON without image data) and its images. */
export function promptPieces(request: Pick<ModelRequest, 'system' | 'messages' | 'tools'>): {
  pieces: string[];
  images: number;
} {
  const pieces = [request.system, JSON.stringify(request.tools)];
  let images = 0;
  for (const message of request.messages) {
    if (message.role === 'tool' && message.images?.length) {
      images += message.images.length;
      pieces.push(JSON.stringify({ ...message, images: undefined }));
    } else {
      pieces.push(JSON.stringify(message));
    }
  }
  return { pieces, images };
}

/** The estimate without a tokenizer. */
export function fallbackTokens(pieces: readonly string[]): number {
  let chars = 0;
  for (const piece of pieces) chars += piece.length;
  return Math.ceil(chars / FALLBACK_CHARS_PER_TOKEN);
}

const fromSources = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(fromSources ? './token-count-worker.ts' : './token-count-worker.js', import.meta.url);

function newWorker(): Worker {
  const options = { resourceLimits: { maxOldGenerationSizeMb: 256 } };
  if (!fromSources) return new Worker(WORKER_URL, options);
  const boot = `const { register } = await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}); register(); await import(${JSON.stringify(WORKER_URL.href)});`;
  return new Worker(boot, { ...options, eval: true });
}

interface Pending {
  resolve(tokens: number | null): void;
  timer: NodeJS.Timeout;
}

/** The worker's client. One per governor; the worker never keeps the process alive. */
export class TokenCounter {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private idle: NodeJS.Timeout | null = null;

  /** The prompt's tokens: the family's tokenizer, else (or when it cannot answer) 3 characters a token. */
  async promptTokens(
    family: TokenFamily | null,
    request: Pick<ModelRequest, 'system' | 'messages' | 'tools'>,
  ): Promise<number> {
    const { pieces, images } = promptPieces(request);
    const counted = family ? await this.count(family, pieces) : null;
    return (counted ?? fallbackTokens(pieces)) + images * IMAGE_TOKENS;
  }

  /** Tokens of `pieces` in `family`, or null when the worker could not say. */
  count(family: TokenFamily, pieces: string[]): Promise<number | null> {
    const worker = this.ensure();
    const id = ++this.seq;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.answer(id, null), COUNT_TIMEOUT_MS);
      timer.unref();
      this.pending.set(id, { resolve, timer });
      worker.postMessage({ id, family, pieces } satisfies TokenCountRequest);
    });
  }

  /** Ends the worker (it starts again on the next count). */
  close(): void {
    const worker = this.worker;
    this.worker = null;
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    for (const id of [...this.pending.keys()]) this.answer(id, null);
    void worker?.terminate();
  }

  private ensure(): Worker {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    if (this.worker) return this.worker;
    const worker = newWorker();
    worker.unref();
    worker.on('message', (reply: TokenCountReply) => this.answer(reply.id, 'tokens' in reply ? reply.tokens : null));
    const gone = () => {
      if (this.worker !== worker) return;
      this.worker = null;
      for (const id of [...this.pending.keys()]) this.answer(id, null);
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    this.worker = worker;
    return worker;
  }

  private answer(id: number, tokens: number | null): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    clearTimeout(pending.timer);
    pending.resolve(tokens);
    if (this.pending.size === 0 && this.worker && !this.idle) {
      this.idle = setTimeout(() => this.close(), IDLE_MS);
      this.idle.unref();
    }
  }
}
