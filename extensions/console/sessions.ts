/**
 * Console sessions, in memory (a daemon restart ends them all: the browser logs in again).
 *
 * - A login code: random, single use, valid {@link CODE_TTL_MS}. `agt console` mints one and prints a URL
 *   carrying it in the fragment (`/console/#code=...`: never sent to a server, never in a log line).
 * - A session: random 256-bit secret kept by the browser in an HttpOnly, SameSite=Strict cookie. Only the
 *   SHA-256 of codes and secrets is stored, so a lookup is a hash-map lookup (no timing oracle on the
 *   secret) and the store holds nothing that could be replayed.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';

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

  constructor(private readonly now: () => number = Date.now) {}

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
    const session: SessionView = { id: randomUUID(), createdAt: now, lastUsedAt: now, expiresAt: now + SESSION_IDLE_MS, via, userAgent: userAgent?.slice(0, 200) ?? null };
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    this.sessions.set(digest(value), session);
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
      if (session.id === id) return this.sessions.delete(key);
    }
    return false;
  }

  clear(): void {
    this.codes.clear();
    this.sessions.clear();
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
