/**
 * Review marks (spec 5.8, decisions D5): kept on this machine in `<dataDir>/review-marks.json`, never in
 * the agent file, keyed by agent id, each with a fingerprint of the security-relevant config. A mark
 * counts only while the file's config still has that fingerprint, so a file changed elsewhere, or one
 * from another installation (no mark here), needs review again. Changes made through this daemon call
 * {@link ReviewMarks.carry} so their mark follows the new config.
 */
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentConfig } from '../../contracts/agent-config.js';
import type { Logger } from '../../contracts/logger.js';
import { canonicalJson } from '../../contracts/canonical-json.js';
import { MAX_JSON_DEPTH } from '../../contracts/validate.js';

export const REVIEW_MARKS_FILE = 'review-marks.json';

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
  return createHash('sha256').update(canonicalJson(picked, MAX_JSON_DEPTH + 1)).digest('hex');
}

export class ReviewMarks {
  private marks: Record<string, ReviewMark> | undefined;
  readonly path: string;

  constructor(
    dataDir: string,
    private readonly logger: Logger,
  ) {
    this.path = join(dataDir, REVIEW_MARKS_FILE);
  }

  private load(): Record<string, ReviewMark> {
    if (this.marks) return this.marks;
    try {
      const parsed = JSON.parse(readFileSync(this.path, 'utf8')) as unknown;
      this.marks = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, ReviewMark>) : {};
    } catch (error) {
      // Missing is normal; a damaged file means every agent needs review again (safe side).
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.logger.warn({ err: error, file: this.path }, 'review marks unreadable; treating all agents as unreviewed');
      this.marks = {};
    }
    return this.marks;
  }

  private save(): void {
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(this.load(), null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.path);
  }

  /** True when this machine reviewed this agent with exactly this security-relevant config. */
  isReviewed(config: Readonly<AgentConfig>): boolean {
    return this.load()[config.id]?.fingerprint === securityFingerprint(config);
  }

  /** Marks the agent reviewed as it is now. */
  accept(config: Readonly<AgentConfig>, filePath: string): void {
    this.load()[config.id] = { fingerprint: securityFingerprint(config), filePath, reviewedAt: Date.now() };
    this.save();
  }

  /** A change made through this daemon: the mark follows when the previous config was reviewed. */
  carry(previous: Readonly<AgentConfig>, next: Readonly<AgentConfig>, filePath: string): void {
    if (!this.isReviewed(previous)) return;
    if (securityFingerprint(previous) === securityFingerprint(next)) return;
    this.accept(next, filePath);
  }
}
