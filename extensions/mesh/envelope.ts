/**
 * The mesh's message envelope (docs/mesh.md) and its signature: Ed25519 by the sender agent's key over the canonical
 * JSON (RFC 8785, `@agt/contracts`) of the envelope without `signature`, written as `ed25519:` and the one base64 form
 * of the 64 bytes (`parseSignature` accepts nothing else). Message ids are derived from the sending agent's DID and its
 * outbox row, so every try of one row (also after a restart) carries the same id and the receiver keeps one copy.
 */
import { createHash } from 'node:crypto';
import { Type, type Static } from 'typebox';
import { canonicalJson, formatSignature, isEd25519Did, parseSignature, verifyDidSignature } from '@agt/contracts';
import type { AgentsService } from '@agt/contracts';
import { noSigningKey } from './errors.js';

export const Envelope = Type.Object(
  {
    version: Type.Literal('1.0'),
    id: Type.String({ minLength: 1, maxLength: 200 }),
    timestamp: Type.String({ maxLength: 64 }),
    from: Type.String({ minLength: 1, maxLength: 128 }),
    to: Type.String({ minLength: 1, maxLength: 128 }),
    reply_to: Type.Optional(Type.String({ maxLength: 500 })),
    payload: Type.Object(
      {
        content: Type.String(),
        content_type: Type.Optional(Type.String({ maxLength: 100 })),
        subject: Type.Optional(Type.String({ maxLength: 500 })),
        thread_id: Type.Optional(Type.String({ maxLength: 200 })),
        parent_id: Type.Optional(Type.String({ maxLength: 200 })),
        attachments: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 32 })),
        sent_at: Type.String({ maxLength: 64 }),
      },
      { additionalProperties: true },
    ),
    signature: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type Envelope = Static<typeof Envelope>;

/** A stable, UUID-shaped id for outbox row `messageId` of the agent with `did`, carrying `text`. */
export function messageIdFor(did: string, messageId: number, text: string): string {
  const hex = createHash('sha256').update(`${did}\n${messageId}\n`).update(text).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const withoutSignature = (envelope: Envelope) => {
  const { signature: _signature, ...rest } = envelope;
  return rest;
};

/** Signs `envelope` (without its signature) with agent `agentId`'s key. */
export async function signEnvelope(agents: AgentsService, agentId: string, envelope: Envelope): Promise<Envelope> {
  const bytes = Buffer.from(canonicalJson(withoutSignature(envelope)), 'utf8');
  let signature: Uint8Array;
  try {
    signature = await agents.keys.sign(agentId, bytes);
  } catch {
    throw noSigningKey(agentId);
  }
  return { ...envelope, signature: formatSignature(signature) };
}

export type SignatureCheck = 'valid' | 'invalid' | 'missing';

/** Whether the envelope's signature is `from`'s over the rest of it. */
export function checkSignature(envelope: Envelope): SignatureCheck {
  if (envelope.signature === undefined) return 'missing';
  const signature = parseSignature(envelope.signature);
  if (!signature || !isEd25519Did(envelope.from)) return 'invalid';
  const bytes = Buffer.from(canonicalJson(withoutSignature(envelope)), 'utf8');
  return verifyDidSignature(envelope.from, bytes, signature) ? 'valid' : 'invalid';
}
