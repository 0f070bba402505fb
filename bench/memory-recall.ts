/**
 * The recall benchmark (docs/memory.md "Quality"): the set of bench/memory-recall-set.json (200
 * conversations, one planted fact each among chit-chat, 100 questions of which 50 paraphrased) saved into
 * one agent file through the memory service, then every question searched and recalled as before a turn.
 * Reports recall@5 (the planted fact among the first 5 hits) for full-text only and for hybrid search, by
 * kind of question, whether recall gave the fact to the model, and recall's tokens per turn (default budget).
 *
 * Hybrid uses the test embedder (test/fakes/embedder.ts, in process) unless a real model is named:
 *   node --import tsx bench/memory-recall.ts [--embed-url=http://127.0.0.1:11434/v1 --model=nomic-embed-text --dims=768
 *     [--key-env=OPENAI_API_KEY]]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelClient, Settings } from '@agt/contracts';
import { AgentFile } from '../kernel/agents/agent-file.js';
import { MemoryService, type MemoryAgent } from '../kernel/memory/service.js';
import { embedText } from '../test/fakes/embedder.js';
import { agentConfig } from '../test/helpers/agent-file.js';

interface RecallSet {
  conversations: Array<{ id: number; fact: string; chatter: string[] }>;
  questions: Array<{ conversation: number; paraphrase: boolean; question: string; expects: string }>;
}

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const set = JSON.parse(readFileSync(new URL('./memory-recall-set.json', import.meta.url), 'utf8')) as RecallSet;
const url = arg('embed-url');
const model = arg('model') ?? 'hash';
const dims = Number(arg('dims') ?? 256);
const keyEnv = arg('key-env');

/** The embedding client: a real OpenAI-format server, or the test embedder's function in process. */
const client: ModelClient = {
  complete: () => Promise.reject(new Error('no chat in this benchmark')),
  async embed({ input, model: name, dimensions }) {
    if (!url) return { vectors: input.map((text) => embedText(text, dimensions ?? dims)), inputTokens: 0, model: name };
    const key = keyEnv ? process.env[keyEnv] : undefined;
    const response = await fetch(`${url.replace(/\/+$/, '')}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({ model: name, input, dimensions, encoding_format: 'float' }),
    });
    if (!response.ok) throw new Error(`embeddings: ${response.status} ${await response.text()}`);
    const body = (await response.json()) as {
      data: Array<{ index: number; embedding: number[] }>;
      usage?: { prompt_tokens?: number };
    };
    return {
      vectors: [...body.data].sort((a, b) => a.index - b.index).map((d) => d.embedding),
      inputTokens: body.usage?.prompt_tokens ?? 0,
      model: name,
    };
  },
};

async function run(hybrid: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'agt-recall-bench-'));
  const file = AgentFile.create(join(dir, 'recall.agt'), agentConfig({ name: 'recall' }));
  file.finishCreation();
  const agent: MemoryAgent = { id: 'recall', config: file.config.get()!, file };
  const settings: Settings = hybrid ? { memory: { embeddings: { provider: 'bench', model, dimensions: dims } } } : {};
  let recalledTokens = 0;
  let recalledIds: number[] = [];
  const service = new MemoryService({
    settings: () => settings,
    now: () => Date.now(),
    logger: { warn: (...a: unknown[]) => console.error(...a) } as never,
    resolveClient: async () => client,
    secrets: async () => [],
    emit: (_agent, type, payload) => {
      if (type === 'memory.recalled')
        (recalledTokens = (payload as { tokens: number }).tokens),
          (recalledIds = (payload as { memory_ids: number[] }).memory_ids);
    },
    agent: () => agent,
  });
  // Saved as a conversation leaves them: the chit-chat as episodes, the fact as the agent's own save.
  for (const c of set.conversations) {
    for (const text of c.chatter) await service.save(agent, { text, kind: 'episode', source: 'compaction' });
    await service.save(agent, { text: c.fact, kind: 'fact', source: 'agent' });
  }
  // The background embedding stops when every memory has its vector, or at the first failure (logged above).
  while (hybrid && service.embeddingRuns(agent.id)) await new Promise((resolve) => setTimeout(resolve, 5));
  const { pending } = file.memory.embeddedCount();
  if (hybrid && pending > 0) throw new Error(`the embedding stopped with ${pending} memories waiting (see above)`);

  const byKind = { direct: { asked: 0, found: 0, recalled: 0 }, paraphrase: { asked: 0, found: 0, recalled: 0 } };
  let tokens = 0;
  for (const q of set.questions) {
    const kind = q.paraphrase ? byKind.paraphrase : byKind.direct;
    kind.asked++;
    const result = await service.search(agent, q.question, { limit: 5 });
    if (hybrid && result.mode !== 'hybrid') throw new Error(`the search was full-text only: ${result.note}`);
    if (result.hits.some((h) => h.memory.text === q.expects)) kind.found++;
    recalledTokens = 0;
    recalledIds = [];
    await service.recall(agent, q.question, { loop: 'main', turnId: 'bench', signal: AbortSignal.timeout(30_000) });
    tokens += recalledTokens;
    if (file.memory.many(recalledIds).some((m) => m.text === q.expects)) kind.recalled++;
  }
  await file.close();
  rmSync(dir, { recursive: true, force: true });
  const rate = (n: number, of: number) => +(n / of).toFixed(2);
  const all = {
    asked: byKind.direct.asked + byKind.paraphrase.asked,
    found: byKind.direct.found + byKind.paraphrase.found,
    recalled: byKind.direct.recalled + byKind.paraphrase.recalled,
  };
  return {
    mode: hybrid ? `hybrid (${url ? `${model} at ${url}` : 'test embedder'}, ${dims} dims)` : 'full-text only',
    'recall@5': rate(all.found, all.asked),
    'recall@5 direct': rate(byKind.direct.found, byKind.direct.asked),
    'recall@5 paraphrased': rate(byKind.paraphrase.found, byKind.paraphrase.asked),
    'fact given by recall': rate(all.recalled, all.asked),
    'recall tokens per turn': Math.round(tokens / all.asked),
  };
}

console.log(
  JSON.stringify({
    memories: set.conversations.reduce((n, c) => n + c.chatter.length + 1, 0),
    questions: set.questions.length,
  }),
);
console.log(JSON.stringify(await run(false)));
console.log(JSON.stringify(await run(true)));
