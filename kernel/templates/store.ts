/**
 * Templates: the built-in `standard` plus user templates, one JSON file per template in
 * `<dataDir>/templates/<id>.json` (the id is the file name; `standard` is reserved). Files are read on
 * every call, so an edit shows at once and voids the file's review mark (marks bind to the content hash).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger, Settings } from '@agt/contracts';
import { builtinAlwaysReviewed, templateInvalidForReview, templateNotFound } from './errors.js';
import { parseTemplate } from './parse.js';
import { readReviewMarks, writeReviewMarks } from './review-marks.js';
import { STANDARD_TEMPLATE_ID, standardTemplate } from './standard.js';
import { TEMPLATE_ID_PATTERN, type TemplateDetail } from './types.js';

export const TEMPLATES_DIR = 'templates';
const ID_RE = new RegExp(TEMPLATE_ID_PATTERN);
const BUILTIN_IDS = new Set([STANDARD_TEMPLATE_ID]);

export class TemplateStore {
  constructor(
    private readonly dataDir: string,
    private readonly settings: () => Readonly<Settings>,
    private readonly logger?: Logger,
  ) {}

  get dir(): string {
    return join(this.dataDir, TEMPLATES_DIR);
  }

  /** Creates the user template folder (0700) so owners find where to put files. */
  ensureDir(): void {
    if (!existsSync(this.dir)) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** Built-ins first, then user templates by id. */
  list(): TemplateDetail[] {
    return [
      this.builtin(),
      ...this.userIds()
        .map((id) => this.user(id)!)
        .filter(Boolean),
    ];
  }

  /** One template, or undefined when no template has that id. */
  get(id: string): TemplateDetail | undefined {
    if (id === STANDARD_TEMPLATE_ID) return this.builtin();
    return this.user(id);
  }

  /** Marks the current content of a user template reviewed. Built-ins are always reviewed. */
  review(id: string): TemplateDetail {
    const template = this.mustGet(id);
    if (template.builtin || template.reviewed) return template;
    if (!template.valid) {
      throw templateInvalidForReview(id, template.error);
    }
    const marks = readReviewMarks(this.dataDir, this.logger);
    marks[id] = { hash: template.contentHash!, reviewedAt: new Date().toISOString() };
    writeReviewMarks(this.dataDir, marks);
    return { ...template, reviewed: true };
  }

  /** Withdraws a user template's review mark. Built-ins cannot be unreviewed (409). */
  unreview(id: string): TemplateDetail {
    const template = this.mustGet(id);
    if (template.builtin) throw builtinAlwaysReviewed(id);
    const marks = readReviewMarks(this.dataDir, this.logger);
    if (marks[id]) {
      delete marks[id];
      writeReviewMarks(this.dataDir, marks);
    }
    return { ...template, reviewed: false };
  }

  private mustGet(id: string): TemplateDetail {
    const template = this.get(id);
    if (!template) throw templateNotFound(id);
    return template;
  }

  private builtin(): TemplateDetail {
    const config = standardTemplate(this.settings());
    return {
      id: STANDARD_TEMPLATE_ID,
      name: 'Standard',
      description: config.description,
      builtin: true,
      reviewed: true,
      valid: true,
      config: structuredClone(config) as unknown as Record<string, unknown>,
    };
  }

  private userIds(): string[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir)
      .filter((file) => file.endsWith('.json'))
      .map((file) => file.slice(0, -'.json'.length))
      .filter((id) => ID_RE.test(id) && !BUILTIN_IDS.has(id))
      .sort();
  }

  private user(id: string): TemplateDetail | undefined {
    if (!ID_RE.test(id) || BUILTIN_IDS.has(id)) return undefined;
    const path = join(this.dir, `${id}.json`);
    let raw: Buffer;
    try {
      if (!statSync(path).isFile()) return undefined;
      raw = readFileSync(path);
    } catch {
      return undefined;
    }
    const contentHash = createHash('sha256').update(raw).digest('hex');
    const parsed = parseTemplate(id, raw);
    const mark = readReviewMarks(this.dataDir, this.logger)[id];
    return {
      id,
      name: parsed.name,
      description: parsed.description,
      builtin: false,
      reviewed: mark?.hash === contentHash,
      valid: parsed.error === null,
      ...(parsed.error === null ? {} : { error: parsed.error }),
      contentHash,
      config: parsed.config,
    };
  }
}
