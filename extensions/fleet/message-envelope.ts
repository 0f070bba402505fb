/**
 * A message between two agents of the fleet as it travels in the fleet's message stream: the mesh's
 * envelope (docs/mesh.md, "Envelope"), signed by the sending agent's key over its canonical JSON, so the
 * receiving daemon checks who wrote it as the mesh does and the receiver's inbox row looks like any mesh
 * message (a reply by `parent_id` works the same). Its id is derived from the sender's DID and outbox row,
 * so every try of one row, also after a restart, carries the same id: JetStream drops a repeat within its
 * duplicate window (the `Nats-Msg-Id` header), the receiver's inbox (one row per id) after it.
 */
import { createHash } from 'node:crypto';
import { canonicalJson, formatSignature, isEd25519Did, parseSignature, verifyDidSignature } from '@agt/contracts';

export interface FleetEnvelope {
  version: '1.0';
  id: string;
  timestamp: string;
  from: string;
  to: string;
  payload: {
    content: string;
    sent_at: string;
    content_type?: string;
    subject?: string;
    thread_id?: string;
    parent_id?: string;
    traceparent?: string;
  };
  signature?: string;
}

/** The id of outbox row `messageId` of the agent with `did`, carrying `text`. */
export function fleetMessageId(did: string, messageId: number, text: string): string {
  return `fleet-${createHash('sha256').update(`${did}\n${messageId}\n`).update(text).digest('hex').slice(0, 40)}`;
}

/** The bytes a signature covers: the canonical JSON of the envelope without `signature`. */
export function signedBytes(envelope: FleetEnvelope): Uint8Array {
  const { signature: _signature, ...rest } = envelope;
  return Buffer.from(canonicalJson(rest), 'utf8');
}

export const withSignature = (envelope: FleetEnvelope, signature: Uint8Array): FleetEnvelope => ({
  ...envelope,
  signature: formatSignature(signature),
});

const text = (value: unknown, max: number) => typeof value === 'string' && value.length <= max;

/** The envelope in `bytes` when it is well formed and its signature is its sender's; otherwise why not. */
export function openEnvelope(bytes: Uint8Array): FleetEnvelope | { refused: string } {
  let envelope: FleetEnvelope;
  try {
    envelope = JSON.parse(Buffer.from(bytes).toString('utf8')) as FleetEnvelope;
  } catch {
    return { refused: 'not JSON' };
  }
  const payload = envelope?.payload;
  if (
    envelope?.version !== '1.0' ||
    !text(envelope.id, 200) ||
    !text(envelope.timestamp, 64) ||
    !text(envelope.to, 128) ||
    typeof payload?.content !== 'string' ||
    !text(payload.sent_at, 64)
  )
    return { refused: 'not a fleet message' };
  if (!text(envelope.from, 128) || !isEd25519Did(envelope.from)) return { refused: 'the sender is not an agent DID' };
  const signature = parseSignature(envelope.signature);
  if (!signature || !verifyDidSignature(envelope.from, signedBytes(envelope), signature))
    return { refused: 'the signature is not the sender’s' };
  return envelope;
}
