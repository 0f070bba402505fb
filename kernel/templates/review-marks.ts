/**
 * Review marks of user templates, kept on this machine in `<dataDir>/template-reviews.json` (0600):
 * `{"version":1,"reviews":{"<templateId>":{"hash":"<sha256 of the file>","reviewedAt":"<ISO time>"}}}`.
 * A mark counts only while the file still has the reviewed content, so editing a template voids it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@agt/contracts';
import { writeFileAtomic } from '../settings.js';

export const REVIEW_MARKS_FILE = 'template-reviews.json';

export interface ReviewMark {
  hash: string;
  reviewedAt: string;
}

export type ReviewMarks = Record<string, ReviewMark>;

export function readReviewMarks(dataDir: string, logger?: Logger): ReviewMarks {
  const path = join(dataDir, REVIEW_MARKS_FILE);
  if (!existsSync(path)) return {};
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { version?: unknown; reviews?: unknown };
    if (parsed.version !== 1 || !parsed.reviews || typeof parsed.reviews !== 'object') throw new Error('unknown shape');
    const marks: ReviewMarks = {};
    for (const [id, mark] of Object.entries(parsed.reviews as Record<string, unknown>)) {
      const { hash, reviewedAt } = (mark ?? {}) as Partial<ReviewMark>;
      if (typeof hash === 'string' && typeof reviewedAt === 'string') marks[id] = { hash, reviewedAt };
    }
    return marks;
  } catch (error) {
    // A damaged file only means "nothing reviewed": failing closed is safe here.
    logger?.warn(
      { file: path, reason: (error as Error).message },
      'template review marks unreadable; treating all as unreviewed',
    );
    return {};
  }
}

export function writeReviewMarks(dataDir: string, marks: ReviewMarks): void {
  writeFileAtomic(
    join(dataDir, REVIEW_MARKS_FILE),
    `${JSON.stringify({ version: 1, reviews: marks }, null, 2)}\n`,
    0o600,
  );
}
