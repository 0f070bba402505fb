/**
 * Hybrid ranking: reciprocal rank fusion of the full-text (BM25) and vector (cosine) result lists, then
 * recency. RRF adds 1 / (k + rank) over the lists a memory appears in, so agreeing lists win and neither
 * list's score scale matters (Cormack et al. 2009, k = 60). Recency multiplies that by up to
 * 1 + {@link RECENCY_WEIGHT}, halving every {@link RECENCY_HALF_LIFE_DAYS} since the memory was made or
 * last used. Pinning does not rank: a pinned memory is recalled in every turn anyway (service.ts).
 */
export const RRF_K = 60;
export const RECENCY_WEIGHT = 0.25;
export const RECENCY_HALF_LIFE_DAYS = 30;
const DAY_MS = 86_400_000;

export interface Ranked {
  id: number;
  score: number;
  /** 1-based rank in the full-text list, when there. */
  text_rank?: number;
  /** Cosine distance, when in the vector list. */
  distance?: number;
}

export interface FusionInfo {
  created_at: number;
  used_at: number | null;
}

export function fuse(
  text: ReadonlyArray<{ id: number }>,
  vector: ReadonlyArray<{ id: number; distance: number }>,
  info: (id: number) => FusionInfo | undefined,
  now: number,
): Ranked[] {
  const out = new Map<number, Ranked>();
  const entry = (id: number) => out.get(id) ?? out.set(id, { id, score: 0 }).get(id)!;
  text.forEach((hit, index) => {
    const e = entry(hit.id);
    e.score += 1 / (RRF_K + index + 1);
    e.text_rank = index + 1;
  });
  vector.forEach((hit, index) => {
    const e = entry(hit.id);
    e.score += 1 / (RRF_K + index + 1);
    e.distance = hit.distance;
  });
  const ranked: Ranked[] = [];
  for (const e of out.values()) {
    const facts = info(e.id);
    if (!facts) continue;
    const ageDays = Math.max(0, now - Math.max(facts.created_at, facts.used_at ?? 0)) / DAY_MS;
    e.score = e.score * (1 + RECENCY_WEIGHT * 0.5 ** (ageDays / RECENCY_HALF_LIFE_DAYS));
    ranked.push(e);
  }
  return ranked.sort((a, b) => b.score - a.score || b.id - a.id);
}
