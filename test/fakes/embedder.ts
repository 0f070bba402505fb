/**
 * A tiny deterministic embedder speaking OpenAI's `POST /v1/embeddings`, for tests and the recall
 * benchmark: a text's vector is the normalized sum of one hashed direction per word, words first folded
 * by a crude stemmer and a small table of synonyms, so a paraphrase ("automobile" for "car") lands near
 * the original where full-text search finds nothing. Not a language model: it knows only its table.
 *
 *   const embedder = await startFakeEmbedder(t);
 *   settings: { providers: [embedder.provider], memory: { embeddings: { provider: 'embed', model: 'hash', dimensions: 256 } } }
 */
import { sendJson, startFakeServer, type FakeServer } from './server.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** Words folded together: each row's words share one direction. */
const SYNONYMS: readonly string[][] = [
  ['car', 'automobile', 'vehicle', 'auto', 'drive'],
  ['dog', 'puppy', 'hound', 'canine', 'pet'],
  ['house', 'home', 'flat', 'apartment', 'live'],
  ['job', 'work', 'employer', 'occupation', 'profession'],
  ['birthday', 'born', 'birth'],
  ['favourite', 'favorite', 'prefer', 'like', 'love'],
  ['doctor', 'physician', 'dentist'],
  ['tea', 'coffee', 'drink', 'beverage'],
  ['city', 'town', 'hometown'],
  ['allergy', 'allergic'],
  ['meeting', 'appointment', 'call'],
  ['sister', 'brother', 'sibling'],
];
const CANON = new Map(SYNONYMS.flatMap((row) => row.map((word) => [word, row[0]!] as const)));
const STOP = new Set(
  (
    'a about after an and are as at be before by can could did do does for from had has have he her his how i if in is it me my ' +
    'of on or our please remind s she should so take tell that the their them they this to today was we were what when where which ' +
    'who will with would you your owner'
  ).split(' '),
);

function stem(word: string): string {
  for (const suffix of ['ing', 'ed', 'es', 's'])
    if (word.length > suffix.length + 2 && word.endsWith(suffix)) return word.slice(0, -suffix.length);
  return word;
}

/** FNV-1a, 32 bits. */
function hash(text: string, seed: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The vector of `text`: unit length, `dimensions` wide. */
export function embedText(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const words = (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => !STOP.has(w));
  for (const raw of words) {
    const word = CANON.get(raw) ?? CANON.get(stem(raw)) ?? stem(raw);
    // Two signed coordinates per word: fewer collisions than one.
    for (const seed of [1, 2]) {
      const h = hash(word, seed);
      vector[h % dimensions]! += h & 0x80000000 ? -1 : 1;
    }
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((x) => x / norm);
}

export interface FakeEmbedder extends FakeServer {
  baseUrl: string;
  /** A provider entry for settings.providers. */
  provider: { id: string; type: 'openai-compatible'; name: string; baseUrl: string };
  /** Inputs of every embeddings request, in order. */
  inputs(): string[][];
  /** Inputs of the requests answered with vectors, in order. */
  answered(): string[][];
  /** Resolves once `count` embeddings requests (answered or failed) have been handled. */
  handled(count: number): Promise<void>;
  /** While set, every request fails with this status. */
  failWith: number | null;
  /** While set, this many more requests are answered, then every one fails with 503 (an embedder going down). */
  answersLeft: number | null;
}

export async function startFakeEmbedder(t: Teardown, id = 'embed'): Promise<FakeEmbedder> {
  const state: { failWith: number | null; answersLeft: number | null } = { failWith: null, answersLeft: null };
  const answered: string[][] = [];
  let handled = 0;
  const waiters: Array<{ count: number; done(): void }> = [];
  const server = await startFakeServer(t, (request, res) => {
    if (request.method !== 'POST' || request.path !== '/v1/embeddings')
      return sendJson(res, 404, { error: { message: 'not found' } });
    res.once('finish', () => {
      handled++;
      for (const waiter of waiters.filter((w) => w.count <= handled)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.done();
      }
    });
    if (state.failWith !== null) return sendJson(res, state.failWith, { error: { message: 'embedder down' } });
    if (state.answersLeft !== null) {
      if (state.answersLeft <= 0) return sendJson(res, 503, { error: { message: 'embedder down' } });
      state.answersLeft--;
    }
    const body = request.body as { input: string[] | string; model: string; dimensions?: number };
    const input = Array.isArray(body.input) ? body.input : [body.input];
    const dimensions = body.dimensions ?? 64;
    const tokens = input.reduce((n, text) => n + Math.ceil(text.length / 4), 0);
    answered.push(input);
    sendJson(res, 200, {
      object: 'list',
      model: body.model,
      data: input.map((text, index) => ({ object: 'embedding', index, embedding: embedText(text, dimensions) })),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  });
  const baseUrl = `${server.origin}/v1`;
  const embedder = server as FakeEmbedder;
  embedder.baseUrl = baseUrl;
  embedder.provider = { id, type: 'openai-compatible', name: 'Test embedder', baseUrl };
  embedder.inputs = () =>
    server.requests
      .filter((r) => r.path === '/v1/embeddings')
      .map((r) => [(r.body as { input: string[] | string }).input].flat());
  embedder.answered = () => [...answered];
  embedder.handled = (count) =>
    count <= handled ? Promise.resolve() : new Promise<void>((done) => waiters.push({ count, done }));
  Object.defineProperty(embedder, 'failWith', {
    get: () => state.failWith,
    set: (value: number | null) => (state.failWith = value),
  });
  Object.defineProperty(embedder, 'answersLeft', {
    get: () => state.answersLeft,
    set: (value: number | null) => (state.answersLeft = value),
  });
  return embedder;
}
