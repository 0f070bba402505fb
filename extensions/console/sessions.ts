/**
 * Console sessions, kept in memory and in `<dataDir>/console/sessions.json` (0600), so a daemon restart
 * keeps the browser logged in. The file holds only SHA-256 digests and metadata: it cannot be turned
 * back into a cookie. Login codes are memory-only (a restart voids them).
 *
 * - A login code: random, single use, valid {@link CODE_TTL_MS}. `agt console` mints one and prints a URL
 *   carrying it in the fragment (`/console/#code=...`: never sent to a server, never in a log line).
 * - A session: random 256-bit secret kept by the browser in an HttpOnly, SameSite=Strict cookie. Only the
 *   SHA-256 of codes and secrets is stored, so a lookup is a hash-map lookup (no timing oracle on the
 *   secret) and the store holds nothing that could be replayed.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export const CODE_TTL_MS = 60_000;
/** A session lives this long after its last use, and never longer than {@link SESSION_MAX_MS}. */
export const SESSION_IDLE_MS = 12 * 3600_000;
export const SESSION_MAX_MS = 7 * 24 * 3600_000;
/** Caps: a flood of codes or logins cannot grow memory without bound (oldest dropped first). */
const MAX_CODES = 64;
const MAX_SESSIONS = 256;

export interface SessionView {
  id: string;
  createdAt: number;
  lastUsedAt: number;
  expiresAt: number;
  /** How it was opened: `code` (one-time URL) or `token` (the daemon token pasted). */
  via: 'code' | 'token';
  userAgent: string | null;
}

const digest = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');
const secret = () => randomBytes(32).toString('base64url');

export class ConsoleSessions {
  private readonly codes = new Map<string, number>();
  private readonly sessions = new Map<string, SessionView>();

  /** `file`: where sessions persist (digests only); none: memory only. */
  constructor(
    private readonly file?: string,
    private readonly now: () => number = Date.now,
  ) {
    if (file) this.load(file);
  }

  private load(file: string): void {
    let saved: unknown;
    try {
      saved = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      return; // No file yet, or unreadable: start empty (the browser logs in again).
    }
    const list = (saved as { sessions?: unknown })?.sessions;
    if (!Array.isArray(list)) return;
    const now = this.now();
    for (const item of list.slice(-MAX_SESSIONS)) {
      const { key, session } = (item ?? {}) as { key?: unknown; session?: SessionView };
      if (
        typeof key !== 'string' ||
        !/^[0-9a-f]{64}$/.test(key) ||
        typeof session?.id !== 'string' ||
        !(session.expiresAt > now)
      )
        continue;
      this.sessions.set(key, {
        id: session.id,
        createdAt: session.createdAt,
        lastUsedAt: session.lastUsedAt,
        expiresAt: session.expiresAt,
        via: session.via === 'token' ? 'token' : 'code',
        userAgent: typeof session.userAgent === 'string' ? session.userAgent : null,
      });
    }
  }

  /** Writes the digests and metadata (owner-only file, replaced in one rename). */
  save(): void {
    if (!this.file) return;
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    const temp = `${this.file}.tmp-${process.pid}`;
    writeFileSync(temp, JSON.stringify({ sessions: [...this.sessions].map(([key, session]) => ({ key, session })) }), {
      mode: 0o600,
    });
    chmodSync(temp, 0o600);
    renameSync(temp, this.file);
  }

  /** A new one-time login code and when it expires. */
  mintCode(): { code: string; expiresAt: number } {
    this.sweep();
    const code = secret();
    const expiresAt = this.now() + CODE_TTL_MS;
    if (this.codes.size >= MAX_CODES) this.codes.delete(this.codes.keys().next().value!);
    this.codes.set(digest(code), expiresAt);
    return { code, expiresAt };
  }

  /** Uses up `code`: true once, for a live code; false for an unknown, used or expired one. */
  redeem(code: string): boolean {
    const key = digest(code);
    const expiresAt = this.codes.get(key);
    this.codes.delete(key);
    return expiresAt !== undefined && expiresAt > this.now();
  }

  /** Opens a session; its secret goes to the browser's cookie only. */
  open(via: SessionView['via'], userAgent: string | null): { secret: string; session: SessionView } {
    this.sweep();
    const value = secret();
    const now = this.now();
    const session: SessionView = {
      id: randomUUID(),
      createdAt: now,
      lastUsedAt: now,
      expiresAt: now + SESSION_IDLE_MS,
      via,
      userAgent: userAgent?.slice(0, 200) ?? null,
    };
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    this.sessions.set(digest(value), session);
    this.save();
    return { secret: value, session };
  }

  /** The live session whose secret this is (its idle clock restarted), or undefined. */
  touch(value: string): SessionView | undefined {
    const key = digest(value);
    const session = this.sessions.get(key);
    if (!session) return undefined;
    const now = this.now();
    if (session.expiresAt <= now) {
      this.sessions.delete(key);
      return undefined;
    }
    session.lastUsedAt = now;
    session.expiresAt = Math.min(now + SESSION_IDLE_MS, session.createdAt + SESSION_MAX_MS);
    return session;
  }

  list(): SessionView[] {
    this.sweep();
    return [...this.sessions.values()].map((session) => ({ ...session }));
  }

  /** Ends the session with this id; false when there is none. */
  revoke(id: string): boolean {
    for (const [key, session] of this.sessions) {
      if (session.id === id) {
        this.sessions.delete(key);
        this.save();
        return true;
      }
    }
    return false;
  }

  /** At stop: codes are forgotten, sessions saved with their last use. */
  close(): void {
    this.codes.clear();
    this.save();
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, expiresAt] of this.codes) if (expiresAt <= now) this.codes.delete(key);
    for (const [key, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(key);
  }
}

/** The value of cookie `name` in a Cookie header, or undefined. */
export function cookieValue(header: string | string[] | undefined, name: string): string | undefined {
  const text = Array.isArray(header) ? header.join('; ') : header;
  if (!text) return undefined;
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
