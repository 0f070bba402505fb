/**
 * Forwarded requests are signed by the sending daemon's runtime key (`ctx.daemonIdentity`) and checked by the
 * daemon that runs them (docs/fleet.md, "Security"): the signature covers the request, the sender's names, a
 * time and a nonce; a request older than {@link MAX_AGE_MS}, one seen before, one with a bad signature, or
 * (when settings `fleet.daemonDids` list the fleet's daemons) one from a key not listed is refused.
 */
import {
  type DaemonIdentity,
  extensionSignedBytes,
  signatureFromBase64,
  signatureToBase64,
  verifyDidSignature,
} from '@agt/contracts';
import { randomUUID } from 'node:crypto';

export const MAX_AGE_MS = 60_000;
const EXTENSION = 'fleet';
const encoder = new TextEncoder();

/** What travels: the signed JSON as it was signed, and the signature. */
export interface Sealed {
  signed: string;
  sig: string;
}

interface Signed<T> {
  body: T;
  daemon: string;
  did: string;
  at: number;
  nonce: string;
}

export class Signer {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly identity: DaemonIdentity | undefined,
    private readonly daemon: string,
    /** The DIDs a request may come from; empty: any daemon with the fleet's credentials. */
    private readonly allowed: () => readonly string[],
  ) {}

  seal<T>(body: T): Sealed {
    if (!this.identity) throw new Error('this daemon offers no runtime key to sign with');
    const signed = JSON.stringify({
      body,
      daemon: this.daemon,
      did: this.identity.did,
      at: Date.now(),
      nonce: randomUUID(),
    } satisfies Signed<T>);
    return { signed, sig: signatureToBase64(this.identity.sign(encoder.encode(signed))) };
  }

  /** The body of a sealed message, or why it is refused. */
  open<T>(sealed: Partial<Sealed>): { body: T; daemon: string } | { refused: string } {
    if (typeof sealed?.signed !== 'string' || typeof sealed.sig !== 'string') return { refused: 'not signed' };
    let inner: Partial<Signed<T>>;
    try {
      inner = JSON.parse(sealed.signed) as Partial<Signed<T>>;
    } catch {
      return { refused: 'not signed' };
    }
    const signature = signatureFromBase64(sealed.sig);
    if (typeof inner.did !== 'string' || !signature) return { refused: 'not signed' };
    if (!verifyDidSignature(inner.did, extensionSignedBytes(EXTENSION, encoder.encode(sealed.signed)), signature))
      return { refused: 'bad signature' };
    const allowed = this.allowed();
    if (allowed.length > 0 && !allowed.includes(inner.did))
      return { refused: `key ${inner.did} is not a daemon of the fleet` };
    const now = Date.now();
    if (typeof inner.at !== 'number' || Math.abs(now - inner.at) > MAX_AGE_MS)
      return { refused: 'too old (or clocks apart)' };
    if (typeof inner.nonce !== 'string' || this.seen.has(inner.nonce)) return { refused: 'replayed' };
    for (const [nonce, at] of this.seen) if (now - at > 2 * MAX_AGE_MS) this.seen.delete(nonce);
    this.seen.set(inner.nonce, now);
    return { body: inner.body as T, daemon: typeof inner.daemon === 'string' ? inner.daemon : '?' };
  }
}
