/**
 * Attestations of an agent's identity, stored in its file:
 * - `owner`: the owner's Ed25519 key signs the agent's DID and file id: "this agent is mine";
 * - `runtime`: the runtime stamp, the daemon that created (or re-keyed) the agent signs the same.
 * Each signs the UTF-8 bytes of `agt-attestation/v1\n<kind>\n<agentDid>\n<agentId>\n<created_at>`, so an
 * attestation cannot be moved to another DID, another file id or another kind. Anyone can verify one
 * with the signer's `did:key` alone.
 */
import { signatureFromBase64, signatureToBase64 } from '@agt/contracts';
import { verifyWithDid } from '../identity/did-key.js';

export type AttestationKind = 'owner' | 'runtime';

export interface AttestationRecord {
  kind: AttestationKind;
  /** The signer's DID (owner DID or runtime DID). */
  by: string;
  /** The agent DID attested. */
  subject: string;
  /** The agent (file) id attested. */
  fileId: string;
  created_at: number;
  /** Detached Ed25519 signature in the one encoding (88-character padded base64, `signatureFromBase64`). */
  signature: string;
}

export function attestationMessage(
  kind: AttestationKind,
  subject: string,
  fileId: string,
  createdAt: number,
): Uint8Array {
  return new TextEncoder().encode(`agt-attestation/v1\n${kind}\n${subject}\n${fileId}\n${createdAt}`);
}

/** Signs a fresh attestation with `sign` (the owner's or the runtime's signer). */
export function attest(
  kind: AttestationKind,
  by: string,
  subject: string,
  fileId: string,
  sign: (message: Uint8Array) => Uint8Array,
  createdAt = Date.now(),
): AttestationRecord {
  const signature = sign(attestationMessage(kind, subject, fileId, createdAt));
  return { kind, by, subject, fileId, created_at: createdAt, signature: signatureToBase64(signature) };
}

/** True when the signature is `by`'s over this agent's current DID and id. */
export function verifyAttestation(record: AttestationRecord, agentDid: string | null, agentId: string): boolean {
  if (!agentDid || record.subject !== agentDid || record.fileId !== agentId) return false;
  if (typeof record.by !== 'string' || typeof record.signature !== 'string' || !Number.isInteger(record.created_at))
    return false;
  // Only the exact encoding verifies: a lenient decoder would accept many texts for one signature.
  const signature = signatureFromBase64(record.signature);
  return (
    signature !== undefined &&
    verifyWithDid(
      record.by,
      attestationMessage(record.kind, record.subject, record.fileId, record.created_at),
      signature,
    )
  );
}

/** Parses the stored list; malformed entries are dropped (they could not verify anyway). */
export function parseAttestations(raw: Buffer | undefined): AttestationRecord[] {
  if (!raw) return [];
  try {
    const value = JSON.parse(raw.toString('utf8')) as unknown;
    if (!Array.isArray(value)) return [];
    return value.filter(
      (item): item is AttestationRecord =>
        !!item &&
        typeof item === 'object' &&
        (item.kind === 'owner' || item.kind === 'runtime') &&
        typeof item.by === 'string',
    );
  } catch {
    return [];
  }
}
