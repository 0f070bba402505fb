/**
 * Agent memory (docs/memory.md): saving, hybrid search, forgetting, recall before a turn, and the
 * background embedding that fills the vector tables. One service for every loaded agent; the agent's
 * tools, the owner's routes, the turn runner and compaction all go through it, so every write is
 * checked the same way (length, credential values, the agent's storage quota for the agent's own saves).
 *
 * Embeddings come from the owner's settings `memory.embeddings {provider, model, dimensions}` through
 * the model client of that provider (`ModelClient.embed`), wrapped by the spend governor. Without one,
 * or while the provider fails, search is full-text only and says so (`mode: "fulltext"`, `note`).
 * Embedding runs in the background, one batch at a time per agent, and resumes from whatever has no
 * vector yet: after a restart, a model change (the old vectors are deleted) or a failure.
 */
import type { AgentConfig, EventPayloads, EventType, Logger, ModelClient, Settings } from '@agt/contracts';
import type { AgentFile } from '../agents/agent-file.js';
import { assertFileWriteFits, quotaBytesFor } from '../storage/quota.js';
import { credentialIn } from './credential-check.js';
import { memoryHoldsCredential, memoryNotFound, memoryTextInvalid } from './errors.js';
import { fuse, type Ranked } from './fusion.js';
import { ftsTerms, MAX_MEMORY_CHARS, type Memory, type MemoryKind, type MemorySource } from './memory-store.js';
import { EXACT_SEARCH_LIMIT } from './search-sql.mjs';
import { searchOnThread } from './search-thread.js';
import { useVectorModel, vectorBlob, vectorModel } from './vectors.js';

/** Candidates each list brings to the fusion. */
export const SEARCH_DEPTH = 50;
/**
 * Vector hits farther than this (cosine distance) are no match at all: the nearest are returned
 * whatever their distance, and unrelated texts sit near 1 (orthogonal).
 */
export const SEARCH_MAX_DISTANCE = 0.8;
/** A vector hit farther than this is not offered by recall unless full-text found it too. */
export const RECALL_MAX_DISTANCE = 0.6;
/** Recall's token budget when the agent's config does not say (`memory.recall_tokens`). */
export const DEFAULT_RECALL_TOKENS = 600;
/** Memories embedded per call. */
export const EMBED_BATCH = 32;
/** How long a forgotten memory is kept (for the owner to see or restore) before it is deleted. */
export const FORGOTTEN_KEEP_DAYS = 30;
/** The most a single search or embedding call waits for the embedding provider. */
const EMBED_TIMEOUT_MS = 30_000;

export interface MemoryAgent {
  readonly id: string;
  readonly config: AgentConfig;
  readonly file: AgentFile;
}

export interface MemoryDeps {
  settings(): Readonly<Settings>;
  now(): number;
  logger: Logger;
  /** The governed model client of `providerId` for this agent; undefined when none serves it. */
  resolveClient(agent: MemoryAgent, providerId: string): Promise<ModelClient | undefined>;
  /** The agent's sealed credential values that can be read now (none while locked). */
  secrets(agent: MemoryAgent): Promise<string[]>;
  emit<T extends EventType>(
    agent: MemoryAgent,
    type: T,
    payload: EventPayloads[T],
    where?: { loop?: string; turnId?: string },
  ): void;
  /** The loaded agent by id (the background embedder finds it again after each await). */
  agent(agentId: string): MemoryAgent | undefined;
}

export interface SaveInput {
  text: string;
  kind?: MemoryKind;
  pinned?: boolean;
  source: MemorySource;
  loop?: string | null;
  turnId?: string | null;
  rowId?: number | null;
}

export type SearchMode = 'hybrid' | 'fulltext';

export interface SearchHit extends Ranked {
  memory: Memory;
}

export interface SearchResult {
  mode: SearchMode;
  /** Why the search is full-text only, when it is. */
  note?: string;
  hits: SearchHit[];
}

interface Embedding {
  client: ModelClient & { embed: NonNullable<ModelClient['embed']> };
  provider: string;
  model: string;
  dimensions: number;
  /** `provider/model/dimensions`: what the vector table holds vectors of. */
  signature: string;
}

const estimateTokens = (text: string) => Math.ceil(text.length / 4);

export class MemoryService {
  /** Agents whose background embedding runs, and whether another round was asked meanwhile. */
  private readonly embedding = new Map<string, { again: boolean }>();

  constructor(private readonly deps: MemoryDeps) {}

  /**
   * Checks a text before it is saved: not empty, not too long, no credential value. `secrets` is read
   * once per call (compaction checks many texts against one read).
   */
  check(text: string, secrets: readonly string[]): string {
    const trimmed = text.trim();
    if (trimmed === '') throw memoryTextInvalid('a memory needs some text');
    if (trimmed.length > MAX_MEMORY_CHARS)
      throw memoryTextInvalid(`a memory holds at most ${MAX_MEMORY_CHARS} characters (got ${trimmed.length})`);
    const found = credentialIn(trimmed, secrets);
    if (found) throw memoryHoldsCredential(found);
    return trimmed;
  }

  /** The agent's credential values that can be read now (for {@link check}). */
  secretsOf(agent: MemoryAgent): Promise<string[]> {
    return this.deps.secrets(agent);
  }

  /** Saves one memory. `quota`: the agent's own write, held to its storage quota (docs/memory.md). */
  async save(agent: MemoryAgent, input: SaveInput, options: { quota?: boolean } = {}): Promise<Memory> {
    const text = this.check(input.text, await this.deps.secrets(agent));
    if (options.quota) {
      const settings = this.deps.settings();
      // The row, its full-text postings and its vector: about three times the text plus the floats.
      const dims = settings.memory?.embeddings?.dimensions ?? 0;
      assertFileWriteFits(agent.file, quotaBytesFor(settings, agent.id), Buffer.byteLength(text) * 3 + dims * 8, 0);
    }
    const memory = agent.file.memory.add({ ...input, text }, this.deps.now());
    this.deps.emit(
      agent,
      'memory.saved',
      { memory_id: memory.id, kind: memory.kind, source: memory.source },
      where(input),
    );
    this.embedInBackground(agent);
    return memory;
  }

  /** Saves several memories in one transaction (compaction); the texts were checked by {@link check}. */
  saveChecked(agent: MemoryAgent, inputs: readonly SaveInput[]): Memory[] {
    const now = this.deps.now();
    return inputs.map((input) => agent.file.memory.add(input, now));
  }

  /** After memories were written by {@link saveChecked} and committed: announce them and embed. */
  announce(agent: MemoryAgent, memories: readonly Memory[]): void {
    for (const m of memories)
      this.deps.emit(agent, 'memory.saved', { memory_id: m.id, kind: m.kind, source: m.source }, where(m));
    if (memories.length > 0) this.embedInBackground(agent);
  }

  update(
    agent: MemoryAgent,
    id: number,
    patch: { text?: string; kind?: MemoryKind; pinned?: boolean },
    secrets: readonly string[],
  ): Memory {
    const text = patch.text === undefined ? undefined : this.check(patch.text, secrets);
    const memory = agent.file.memory.update(id, { ...patch, ...(text !== undefined ? { text } : {}) }, this.deps.now());
    if (!memory) throw memoryNotFound(id);
    if (text !== undefined) this.embedInBackground(agent);
    return memory;
  }

  /**
   * Forgets a memory: out of every search at once, kept as forgotten for {@link FORGOTTEN_KEEP_DAYS}
   * days (the owner lists them with `?forgotten=true`), then deleted. `purge` deletes at once.
   */
  forget(agent: MemoryAgent, id: number, actor: 'agent' | 'owner', options: { purge?: boolean } = {}): void {
    const now = this.deps.now();
    const done = options.purge ? agent.file.memory.delete(id) : agent.file.memory.forget(id, now);
    if (!done) throw memoryNotFound(id);
    this.purgeForgotten(agent);
    this.deps.emit(agent, 'memory.forgotten', { memory_id: id, actor });
  }

  /**
   * Hybrid search: full-text (BM25) and, with embeddings, vector results fused by reciprocal rank with
   * recency (fusion.ts). `touch` marks the hits used (the agent's own searches and recall do).
   */
  async search(
    agent: MemoryAgent,
    query: string,
    options: { limit: number; touch?: boolean; signal?: AbortSignal; turnId?: string; loop?: string },
  ): Promise<SearchResult> {
    const file = agent.file;
    let queryVector: number[] | undefined;
    let note: string | undefined;
    const embedding = await this.embeddingFor(agent).catch(
      (error: unknown) => ((note = `embeddings unavailable: ${message(error)}`), undefined),
    );
    if (embedding) {
      if (vectorModel(file.raw) !== embedding.signature) this.embedInBackground(agent);
      try {
        [queryVector] = await this.embed(embedding, [query], options);
      } catch (error) {
        note = `the embedding call failed, full-text only: ${message(error)}`;
      }
    } else note ??= 'no embedding model configured (settings memory.embeddings): full-text search only';
    if (!file.isOpen) return { mode: 'fulltext', ...(note ? { note } : {}), hits: [] };
    // Vectors of another model (a change not yet re-embedded) are not compared with this one's.
    const vectorQuery =
      queryVector && embedding && vectorModel(file.raw) === embedding.signature ? queryVector : undefined;
    const lists = await this.lists(file, query, vectorQuery);
    const mode: SearchMode = embedding && !note ? 'hybrid' : 'fulltext';
    if (!file.isOpen) return { mode, ...(note ? { note } : {}), hits: [] };
    const vector = lists.vector.filter((hit) => hit.distance <= SEARCH_MAX_DISTANCE);
    const found = new Map(
      file.memory
        .many([...new Set([...lists.text.map((h) => h.id), ...vector.map((h) => h.id)])])
        .map((m) => [m.id, m]),
    );
    const ranked = fuse(lists.text, vector, (id) => found.get(id), this.deps.now());
    const hits = ranked.slice(0, options.limit).map((r) => ({ ...r, memory: found.get(r.id)! }));
    if (options.touch)
      file.memory.touch(
        hits.map((h) => h.id),
        this.deps.now(),
      );
    return { mode, ...(note ? { note } : {}), hits };
  }

  /**
   * The full-text and vector candidates: on the daemon's connection for a small file (well under a
   * millisecond), on the search worker for a large one, so the event loop never waits on the scan.
   */
  private async lists(
    file: AgentFile,
    query: string,
    vector: number[] | undefined,
  ): Promise<{ text: Array<{ id: number }>; vector: Array<{ id: number; distance: number }> }> {
    if (!file.memory.liveMoreThan(EXACT_SEARCH_LIMIT)) {
      return {
        text: file.memory.fullText(query, SEARCH_DEPTH),
        vector: vector ? file.memory.nearest(vector, SEARCH_DEPTH) : [],
      };
    }
    return searchOnThread({
      path: file.path,
      terms: ftsTerms(query),
      vector: vector ? vectorBlob(vector) : null,
      depth: SEARCH_DEPTH,
      bits: file.memory.takeVectorChanges(),
    });
  }

  /**
   * The recall block of a turn: pinned memories first, then the best hits for `input` that full-text
   * found or that are close in meaning, as many as fit the agent's `memory.recall_tokens`. Null when
   * recall is off or nothing fits. Emits `memory.recalled`.
   */
  async recall(
    agent: MemoryAgent,
    input: string,
    where: { loop: string; turnId: string; signal: AbortSignal },
  ): Promise<string | null> {
    const config = agent.config.memory;
    const budget = config?.recall === false ? 0 : (config?.recall_tokens ?? DEFAULT_RECALL_TOKENS);
    if (budget <= 0 || !agent.file.memory.liveMoreThan(0)) return null;
    const pinned = agent.file.memory.pinned(20);
    const result = input.trim()
      ? await this.search(agent, input, { limit: 20, signal: where.signal, turnId: where.turnId, loop: where.loop })
      : { mode: 'fulltext' as const, hits: [] };
    const relevant = result.hits
      .filter((h) => h.text_rank !== undefined || (h.distance ?? 1) <= RECALL_MAX_DISTANCE)
      .map((h) => h.memory);
    const chosen: Memory[] = [];
    const lines: string[] = [];
    let tokens = estimateTokens(RECALL_HEADER) + 10;
    for (const memory of [...pinned, ...relevant]) {
      if (chosen.some((m) => m.id === memory.id)) continue;
      const line = `[memory ${memory.id}] (${memory.kind}${memory.pinned ? ', pinned' : ''}, ${new Date(memory.created_at).toISOString().slice(0, 10)}) ${memory.text}`;
      const cost = estimateTokens(line) + 1;
      if (tokens + cost > budget) continue;
      tokens += cost;
      chosen.push(memory);
      lines.push(line);
    }
    if (chosen.length === 0 || !agent.file.isOpen) return null;
    agent.file.memory.touch(
      chosen.map((m) => m.id),
      this.deps.now(),
    );
    this.deps.emit(
      agent,
      'memory.recalled',
      { memory_ids: chosen.map((m) => m.id), tokens, mode: result.mode },
      { loop: where.loop, turnId: where.turnId },
    );
    return `<recalled-memories>\n${RECALL_HEADER}\n${lines.join('\n')}\n</recalled-memories>`;
  }

  /** What the owner's view shows about an agent's memory. */
  status(agent: MemoryAgent): {
    live: number;
    forgotten: number;
    pinned: number;
    embeddings: { configured: boolean; model: string | null; embedded: number; pending: number };
  } {
    const counts = agent.file.memory.count();
    const configured = this.deps.settings().memory?.embeddings;
    const vectors = agent.file.memory.embeddedCount();
    return {
      ...counts,
      embeddings: { configured: configured !== undefined, model: vectorModel(agent.file.raw) ?? null, ...vectors },
    };
  }

  /**
   * The agent's file was loaded: memories forgotten more than {@link FORGOTTEN_KEEP_DAYS} days ago are deleted
   * (a file that sat unloaded keeps none past their time), and memories with no vector, or one of another
   * model, are embedded in the background.
   */
  loaded(agent: MemoryAgent): void {
    this.purgeForgotten(agent);
    this.embedInBackground(agent);
  }

  private purgeForgotten(agent: MemoryAgent): void {
    agent.file.memory.purgeForgotten(this.deps.now() - FORGOTTEN_KEEP_DAYS * 86_400_000);
  }

  /** Starts (or asks for one more round of) the background embedding of the agent's memories. */
  embedInBackground(agent: MemoryAgent): void {
    if (!this.deps.settings().memory?.embeddings) return;
    const running = this.embedding.get(agent.id);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.embedding.set(agent.id, state);
    void this.embedLoop(agent.id, state).finally(() => this.embedding.delete(agent.id));
  }

  /** Whether a background embedding runs for the agent (tests and the owner's status). */
  embeddingRuns(agentId: string): boolean {
    return this.embedding.has(agentId);
  }

  private async embedLoop(agentId: string, state: { again: boolean }): Promise<void> {
    for (;;) {
      state.again = false;
      const agent = this.deps.agent(agentId);
      if (!agent?.file.isOpen) return;
      let embedding: Embedding | undefined;
      try {
        embedding = await this.embeddingFor(agent);
      } catch (error) {
        this.deps.logger.warn({ agentId, err: message(error) }, 'memory embeddings unavailable');
        return;
      }
      if (!embedding || !agent.file.isOpen) return;
      if (useVectorModel(agent.file.raw, embedding.signature)) agent.file.memory.vectorsCleared();
      const batch = agent.file.memory.unembedded(EMBED_BATCH);
      if (batch.length === 0) {
        if (!state.again) return;
        continue;
      }
      let vectors: number[][];
      try {
        vectors = await this.embed(
          embedding,
          batch.map((m) => m.text),
          {},
        );
      } catch (error) {
        this.deps.logger.warn(
          { agentId, err: message(error) },
          'memory embedding failed; the next save or search tries again',
        );
        return;
      }
      const current = this.deps.agent(agentId);
      if (!current?.file.isOpen || vectorModel(current.file.raw) !== embedding.signature) return;
      const stored = current.file.memory.putVectors(batch.map((m, i) => ({ ...m, vector: vectors[i]! })));
      this.deps.emit(current, 'memory.embedded', {
        count: stored,
        pending: current.file.memory.embeddedCount().pending,
        model: embedding.signature,
      });
    }
  }

  /**
   * The agent's embedding model from the settings, or undefined when none is configured; throws when its provider
   * cannot embed.
   */
  private async embeddingFor(agent: MemoryAgent): Promise<Embedding | undefined> {
    const wanted = this.deps.settings().memory?.embeddings;
    if (!wanted) return undefined;
    const client = await this.deps.resolveClient(agent, wanted.provider);
    if (!client) throw new Error(`no provider ${wanted.provider} serves this agent`);
    if (!client.embed) throw new Error(`provider ${wanted.provider} has no embeddings endpoint`);
    const signature = `${wanted.provider}/${wanted.model}/${wanted.dimensions}`;
    return {
      client: client as Embedding['client'],
      provider: wanted.provider,
      model: wanted.model,
      dimensions: wanted.dimensions,
      signature,
    };
  }

  private async embed(
    embedding: Embedding,
    input: string[],
    where: { signal?: AbortSignal; turnId?: string; loop?: string },
  ): Promise<number[][]> {
    const signal = where.signal
      ? AbortSignal.any([where.signal, AbortSignal.timeout(EMBED_TIMEOUT_MS)])
      : AbortSignal.timeout(EMBED_TIMEOUT_MS);
    const response = await embedding.client.embed({
      model: embedding.model,
      input,
      dimensions: embedding.dimensions,
      signal,
      ...(where.turnId ? { turnId: where.turnId } : {}),
      ...(where.loop ? { loop: where.loop } : {}),
    });
    if (response.vectors.some((v) => v.length !== embedding.dimensions)) {
      throw new Error(
        `the model answered vectors of ${response.vectors[0]?.length} dimensions; settings memory.embeddings.dimensions says ${embedding.dimensions}`,
      );
    }
    return response.vectors;
  }
}

export const RECALL_HEADER =
  'Memories recalled for this turn from your long-term memory (cite one as [memory N] when you use it):';

const where = (input: { loop?: string | null; turnId?: string | null; turn_id?: string | null }) => ({
  ...(input.loop ? { loop: input.loop } : {}),
  ...((input.turnId ?? input.turn_id) ? { turnId: (input.turnId ?? input.turn_id)! } : {}),
});

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
