/**
 * Worker thread of {@link ./token-count.ts}: counts the tokens of a prompt's pieces with one model family's
 * tokenizer and answers `{id, tokens}` or `{id, error}`. Each encoding is imported when first asked for
 * (its rank tables are 1-2.5 MB of JavaScript: ~100-200 ms to evaluate, 40-70 MB of memory). Special-token
 * spellings in a prompt (`<|endoftext|>`) are counted as the ordinary text they are.
 */
import { parentPort } from 'node:worker_threads';
import type { TokenCountReply, TokenCountRequest, TokenFamily } from './token-count.js';

type Count = (text: string) => number;

const NO_SPECIAL = { disallowedSpecial: new Set<string>() };

const LOADERS: Record<TokenFamily, () => Promise<Count>> = {
  o200k: async () => {
    const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
    return (text) => countTokens(text, NO_SPECIAL);
  },
  cl100k: async () => {
    const { countTokens } = await import('gpt-tokenizer/encoding/cl100k_base');
    return (text) => countTokens(text, NO_SPECIAL);
  },
  claude: async () => {
    const [{ Tokenizer }, { name, pat_str, stringEncoder, binaryEncoder, decoder }] = await Promise.all([
      import('ai-tokenizer'),
      import('ai-tokenizer/encoding/claude'),
    ]);
    const tokenizer = new Tokenizer({ name, pat_str, stringEncoder, binaryEncoder, decoder, special_tokens: {} });
    return (text) => tokenizer.count(text);
  },
};

const counters = new Map<TokenFamily, Promise<Count>>();

/** Pieces at least this long are remembered: a turn's next call resends the same history. */
const REMEMBER_FROM = 256;
/** The remembered pieces' characters, at most (oldest forgotten first). */
const REMEMBER_CHARS = 16_000_000;
const remembered = new Map<string, number>();
let rememberedChars = 0;

function countPiece(family: TokenFamily, count: Count, piece: string): number {
  if (piece.length < REMEMBER_FROM) return count(piece);
  const key = `${family}\n${piece}`;
  const known = remembered.get(key);
  if (known !== undefined) {
    remembered.delete(key);
    remembered.set(key, known);
    return known;
  }
  const tokens = count(piece);
  remembered.set(key, tokens);
  rememberedChars += key.length;
  for (const [old] of remembered) {
    if (rememberedChars <= REMEMBER_CHARS) break;
    remembered.delete(old);
    rememberedChars -= old.length;
  }
  return tokens;
}

const port = parentPort!;
port.on('message', async ({ id, family, pieces }: TokenCountRequest) => {
  let reply: TokenCountReply;
  try {
    let loading = counters.get(family);
    if (!loading) counters.set(family, (loading = LOADERS[family]()));
    const count = await loading;
    let tokens = 0;
    for (const piece of pieces) tokens += countPiece(family, count, piece);
    reply = { id, tokens };
  } catch (error) {
    counters.delete(family);
    reply = { id, error: (error as Error)?.message ?? String(error) };
  }
  port.postMessage(reply);
});
