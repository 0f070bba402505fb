/**
 * Review marks (docs/agent-files.md#review-gate): kept on this machine in `<dataDir>/review-marks.json`, never in
 * the agent file, keyed by agent id, each with a fingerprint of the security-relevant config. A mark
 * counts only while the file's config still has that fingerprint, so a file changed elsewhere, or one
 * from another installation (no mark here), needs review again. Changes made through this daemon call
 * {@link ReviewMarks.carry} so their mark follows the new config.
 *
 * A new mark is appended as one JSON line to `review-marks.journal` beside the file rather than the whole
 * file rewritten: every create marks its agent, and rewriting all marks cost O(agents) per create (~2-7
 * ms with 1,000 marks). The journal is folded into `review-marks.json` once it holds as many
 * lines as the file holds marks (at least 64), so the file is rewritten at 64, 128, 256, ... marks:
 * amortized O(1) per mark; reading applies the journal's lines in order
 * over the file, so a fold interrupted after the file was replaced replays to the same marks. A line cut
 * short by a crash is skipped: that agent needs review again (the safe side). Neither file is synced, as
 * before: they survive the daemon being killed, not the machine losing power.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AgentConfig, type Logger, canonicalJson, MAX_JSON_DEPTH } from '@agt/contracts';

export const REVIEW_MARKS_FILE = 'review-marks.json';
/** Marks made since the file was last written, one `{"id": ..., "mark": {...}}` line each. */
export const REVIEW_MARKS_JOURNAL = 'review-marks.journal';
/** The journal is folded into the file once it has this many lines, or as many as the file has marks. */
const MIN_FOLD_LINES = 64;

/** The config fields whose change needs a new review: capabilities, reach and autonomy. */
export const SECURITY_FIELDS = [
  'id',
  'autonomous',
  'autostart',
  'tools',
  'triggers',
  'security',
  'limits',
  'messaging',
  'mcp',
  'adapters',
  'providers',
  'loops',
  'ws_connections',
  'serving',
  'locked_fields',
] as const satisfies ReadonlyArray<keyof AgentConfig>;

export interface ReviewMark {
  fingerprint: string;
  filePath: string;
  reviewedAt: number;
}

/** sha256 over the security-relevant fields (plus the model's provider, which decides where data goes). */
export function securityFingerprint(config: Readonly<AgentConfig>): string {
  const picked: Record<string, unknown> = { model_provider: config.model?.provider };
  for (const field of SECURITY_FIELDS) picked[field] = config[field];
  // The project's one canonical JSON (RFC 8785): sorted keys, so equal configs give equal text whatever
  // their key order. Configs are depth-checked before they get here; `picked` adds one level.
  return createHash('sha256')
    .update(canonicalJson(picked, MAX_JSON_DEPTH + 1))
    .digest('hex');
}

export class ReviewMarks {
  private marks: Record<string, ReviewMark> | undefined;
  /** Lines in the journal now (read at load, counted as appended), and marks in the file itself. */
  private journalLines = 0;
  private filed = 0;
  readonly path: string;
  readonly journalPath: string;

  constructor(
    dataDir: string,
    private readonly logger: Logger,
  ) {
    this.path = join(dataDir, REVIEW_MARKS_FILE);
    this.journalPath = join(dataDir, REVIEW_MARKS_JOURNAL);
  }

  private load(): Record<string, ReviewMark> {
    if (this.marks) return this.marks;
    const { marks, journalLines, filed } = readReviewMarks(this.path, this.journalPath, (error, file) =>
      this.logger.warn({ err: error, file }, 'review marks unreadable; treating all agents as unreviewed'),
    );
    this.marks = marks;
    this.journalLines = journalLines;
    this.filed = filed;
    return marks;
  }

  /** Appends one mark to the journal; folds the journal into the file when it has grown as large. */
  private save(id: string, mark: ReviewMark): void {
    appendFileSync(this.journalPath, `${JSON.stringify({ id, mark })}\n`, { mode: 0o600 });
    this.journalLines++;
    if (this.journalLines >= Math.max(MIN_FOLD_LINES, this.filed)) this.fold();
  }

  /** Rewrites the file with every mark, then drops the journal (its lines are all in the file now). */
  private fold(): void {
    const marks = this.load();
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(marks, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.path);
    rmSync(this.journalPath, { force: true });
    this.journalLines = 0;
    this.filed = Object.keys(marks).length;
  }

  /** True when this machine reviewed this agent with exactly this security-relevant config. */
  isReviewed(config: Readonly<AgentConfig>): boolean {
    return this.load()[config.id]?.fingerprint === securityFingerprint(config);
  }

  /** Marks the agent reviewed as it is now. */
  accept(config: Readonly<AgentConfig>, filePath: string): void {
    const mark: ReviewMark = { fingerprint: securityFingerprint(config), filePath, reviewedAt: Date.now() };
    this.load()[config.id] = mark;
    this.save(config.id, mark);
  }

  /** A change made through this daemon: the mark follows when the previous config was reviewed. */
  carry(previous: Readonly<AgentConfig>, next: Readonly<AgentConfig>, filePath: string): void {
    if (!this.isReviewed(previous)) return;
    if (securityFingerprint(previous) === securityFingerprint(next)) return;
    this.accept(next, filePath);
  }
}

/**
 * The marks of a data directory: `review-marks.json`, then the journal's lines applied in order. A
 * missing file or journal is normal; a damaged file counts as no marks (every agent needs review again,
 * the safe side) and a damaged journal line as no mark for that line.
 */
export function readReviewMarks(
  path: string,
  journalPath: string,
  onUnreadable: (error: unknown, file: string) => void = () => {},
): { marks: Record<string, ReviewMark>; journalLines: number; filed: number } {
  let marks: Record<string, ReviewMark> = {};
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) marks = parsed as Record<string, ReviewMark>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') onUnreadable(error, path);
  }
  const filed = Object.keys(marks).length;
  let journal = '';
  try {
    journal = readFileSync(journalPath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') onUnreadable(error, journalPath);
  }
  let journalLines = 0;
  for (const line of journal.split('\n')) {
    if (line === '') continue;
    journalLines++;
    try {
      const entry = JSON.parse(line) as { id?: unknown; mark?: ReviewMark };
      if (typeof entry.id === 'string' && typeof entry.mark?.fingerprint === 'string') marks[entry.id] = entry.mark;
    } catch {
      // A line cut short (the daemon killed mid-append): that mark is not there.
    }
  }
  return { marks, journalLines, filed };
}
