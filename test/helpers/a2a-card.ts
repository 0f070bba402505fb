/**
 * Test helper: checking an A2A agent card's signatures the way a verifier that takes the card exactly as
 * received would (no proto form): the JSON without `signatures`, empty values dropped at any depth, in
 * canonical JSON, signed by the key its `kid` names (a did:key).
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { canonicalJson, publicKeyFromDid } from '../../contracts/agent-keys.js';

/** The public key a signature's `kid` names (a did:key), as a verifier that trusts did:key would resolve it. */
export const didKey = async (kid: string): Promise<KeyObject> => keyOf(kid.split('#')[0]!);

const keyOf = (did: string) =>
  createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKeyFromDid(did)).toString('base64url') },
    format: 'jwk',
  });

/** Empty strings, lists, objects and nulls dropped at any depth (the A2A signature's canonical form). */
const cleaned = (value: any): any => {
  if (value === '' || value === null || value === undefined) return undefined;
  if (Array.isArray(value)) {
    const kept = value.map(cleaned).filter((item) => item !== undefined);
    return kept.length > 0 ? kept : undefined;
  }
  if (typeof value !== 'object') return value;
  const kept = Object.entries(value)
    .map(([key, inner]) => [key, cleaned(inner)])
    .filter(([, inner]) => inner !== undefined);
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
};

/** Whether one of the card's signatures (by `did`'s key when given) covers the card exactly as received. */
export function signedAsServed(card: any, did?: string): boolean {
  const { signatures, ...rest } = card;
  const payload = Buffer.from(canonicalJson(cleaned(rest))).toString('base64url');
  return (signatures ?? []).some((entry: any) => {
    const signer = (JSON.parse(Buffer.from(entry.protected, 'base64url').toString()).kid as string).split('#')[0]!;
    if (did !== undefined && signer !== did) return false;
    return verify(
      null,
      Buffer.from(`${entry.protected}.${payload}`),
      keyOf(signer),
      Buffer.from(entry.signature, 'base64url'),
    );
  });
}
