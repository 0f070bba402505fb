/**
 * SLIP-0010 key derivation for Ed25519 (hardened children only, as the scheme defines for this curve).
 * The owner's keys come from here, so the output must match every other implementation byte for byte:
 * test/identity-crypto.test.ts checks it against the official test vector 1.
 */
import { hmac } from '@noble/hashes/hmac.js';
import { sha512 } from '@noble/hashes/sha2.js';

export const HARDENED_OFFSET = 0x8000_0000;

/** A node of the derivation tree: the 32-byte private key (an Ed25519 seed) and its chain code. */
export interface Slip10Node {
  key: Uint8Array;
  chainCode: Uint8Array;
}

const ED25519_MASTER_SECRET = new TextEncoder().encode('ed25519 seed');

function split(digest: Uint8Array): Slip10Node {
  return { key: digest.slice(0, 32), chainCode: digest.slice(32, 64) };
}

/** The master node of a seed (BIP39 seeds are 64 bytes; SLIP-0010 allows 16 to 64). */
export function masterNode(seed: Uint8Array): Slip10Node {
  if (seed.length < 16 || seed.length > 64) throw new RangeError('SLIP-0010 seed must be 16 to 64 bytes');
  return split(hmac(sha512, ED25519_MASTER_SECRET, seed));
}

/** One hardened child step: HMAC-SHA512(chainCode, 0x00 || key || ser32(index)). */
export function hardenedChild(parent: Slip10Node, index: number): Slip10Node {
  if (!Number.isInteger(index) || index < HARDENED_OFFSET || index > 0xffff_ffff) {
    throw new RangeError('Ed25519 SLIP-0010 supports hardened indexes only');
  }
  const data = new Uint8Array(37);
  data.set(parent.key, 1);
  new DataView(data.buffer).setUint32(33, index, false);
  const node = split(hmac(sha512, parent.chainCode, data));
  data.fill(0);
  return node;
}

/** Parses `m/44'/0'/0'` (also `h` / `H` as the hardened mark). Every segment must be hardened. */
export function parsePath(path: string): number[] {
  const parts = path.trim().split('/');
  if (parts[0] !== 'm') throw new RangeError(`derivation path must start with "m": ${path}`);
  return parts.slice(1).map((part) => {
    const match = /^(\d+)['hH]$/.exec(part);
    if (!match) throw new RangeError(`Ed25519 derivation needs hardened segments, got "${part}" in ${path}`);
    const index = Number(match[1]);
    if (index >= HARDENED_OFFSET) throw new RangeError(`segment ${part} is out of range`);
    return index + HARDENED_OFFSET;
  });
}

/** The node at `path` below the seed's master node. Intermediate keys are wiped as we go. */
export function derivePath(seed: Uint8Array, path: string): Slip10Node {
  let node = masterNode(seed);
  for (const index of parsePath(path)) {
    const next = hardenedChild(node, index);
    node.key.fill(0);
    node.chainCode.fill(0);
    node = next;
  }
  return node;
}
