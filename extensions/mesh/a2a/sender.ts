/**
 * Who sends an A2A message, when the sender is an agt agent (or anyone holding a did:key): the
 * message's `metadata["agt.sender"] = {did, at, signature}`, `signature` being the sender's Ed25519
 * signature (`ed25519:<base64>`, the mesh's one encoding) over the canonical JSON of
 * `{at, did, message_id, text, to}`: `to` is the receiving agent's DID (its card's DID extension),
 * `text` the message's text parts joined with newlines. A proof that does not verify is refused; a
 * message without one comes from an unsigned caller (anonymous: no DID to allow or block).
 */
import { canonicalJson, formatSignature, isEd25519Did, parseSignature, verifyDidSignature } from '@agt/contracts';
import type { AgentsService } from '@agt/contracts';
import { MAX_CLOCK_SKEW_MS, MAX_MESSAGE_AGE_MS } from '../inbound.js';

export const SENDER_METADATA = 'agt.sender';
/** The W3C `traceparent` an agt sender puts in a message's metadata (not signed: it only joins traces). */
export const TRACE_METADATA = 'traceparent';

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** The text parts of a message in its JSON form (v1.0 `{text}` and v0.3 `{kind: "text", text}` alike). */
export const proofText = (parts: unknown): string =>
  (Array.isArray(parts) ? parts : [])
    .map(record)
    .filter((part) => typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('\n');

const bytesOf = (input: { at: string; did: string; messageId: string; text: string; to: string }) =>
  Buffer.from(
    canonicalJson({ at: input.at, did: input.did, message_id: input.messageId, text: input.text, to: input.to }),
    'utf8',
  );

/** The proof agent `agentId` (DID `did`) attaches to a message for `to`. */
export async function senderProof(
  agents: AgentsService,
  agentId: string,
  input: { did: string; messageId: string; text: string; to: string },
) {
  const at = new Date().toISOString();
  const signature = formatSignature(await agents.keys.sign(agentId, bytesOf({ ...input, at })));
  return { did: input.did, at, signature };
}

export type ProofCheck = { status: 'none' } | { status: 'valid'; did: string } | { status: 'invalid'; why: string };

/** Checks the proof of a message (JSON form) addressed to `to`. */
export function checkProof(message: unknown, to: string): ProofCheck {
  const body = record(message);
  const metadata = record(body.metadata);
  if (!(SENDER_METADATA in metadata)) return { status: 'none' };
  const proof = record(metadata[SENDER_METADATA]);
  const did = typeof proof.did === 'string' ? proof.did : '';
  const at = typeof proof.at === 'string' ? Date.parse(proof.at) : Number.NaN;
  const signature = parseSignature(proof.signature);
  if (!isEd25519Did(did) || !signature)
    return {
      status: 'invalid',
      why: 'the sender proof names no Ed25519 did:key or has no signature in the one encoding',
    };
  const now = Date.now();
  if (!Number.isFinite(at) || at < now - MAX_MESSAGE_AGE_MS || at > now + MAX_CLOCK_SKEW_MS)
    return { status: 'invalid', why: 'the sender proof is more than an hour old or more than ten minutes ahead' };
  const messageId = typeof body.messageId === 'string' ? body.messageId : '';
  const bytes = bytesOf({ at: String(proof.at), did, messageId, text: proofText(body.parts), to });
  return verifyDidSignature(did, bytes, signature)
    ? { status: 'valid', did }
    : { status: 'invalid', why: 'the sender proof does not verify against its DID for this agent and message' };
}
