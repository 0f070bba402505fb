export declare const FULL_TEXT_SQL: string;
export declare const EXACT_SEARCH_LIMIT: number;
export declare const OVERSAMPLE: number;
export declare const MIN_CANDIDATES: number;
export declare const COUNT_SQL: string;
export declare const EXACT_SQL: string;
export declare const BITS_SQL: string;
export declare const PREFILTER_SQL: string;
export declare const RESCORE_SQL: string;
export declare function candidateCount(limit: number): number;
export declare function nearestRows(
  all: (sql: string, params: unknown[]) => Array<Record<string, any>>,
  blob: Uint8Array,
  limit: number,
): Array<{ id: number; distance: number }>;
export declare const COMMON_WORD_MEMORIES: number;
export declare function anyOf(terms: readonly string[]): string | null;
export declare function fullTextRows(
  all: (sql: string, params: unknown[]) => Array<Record<string, any>>,
  terms: readonly string[],
  limit: number,
): Array<{ id: number; score: number }>;
