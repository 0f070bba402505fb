/**
 * A2A agent cards (A2A v1.0 §8): what other tools read to talk to an agent over A2A,
 * signed with the agent's own did:key as A2A's `signatures` allow (§8.4): a JWS (RFC 7515) with a
 * detached payload, the payload being the RFC 8785 canonical JSON (`canonicalJson` of
 * `@agt/contracts`) of the card without `signatures` and without members holding a default value
 * (empty strings, empty lists and objects: §8.4.1 rule 1; the card carries only proto fields, so what
 * the official SDK's `canonicalizeAgentCard` reads is the same bytes). Protected header
 * `{alg: "EdDSA", typ: "JOSE", kid: "<did>#<key>"}`: the key is the DID's own, so a verifier needs
 * nothing but the card.
 *
 * Two shapes at one URL, by the `A2A-Version` request header as the SDK's own card router does: `1.0`
 * (what v1.0 clients send) gets the v1.0 card; none or `0.3` gets the same card with the v0.3 members
 * added (`url`, `preferredTransport`, `protocolVersion`; `supportsAuthenticatedExtendedCard` and `securitySchemes` in
 * the v0.3 form). Each shape is signed as it is served, so a verifier of the whole card it received finds a
 * signature that covers every member. The extended card (extended-card.ts) is built and signed the same way.
 */
import { canonicalJson, isEd25519Did, publicKeyFromDid, verifyDidSignature } from '@agt/contracts';
import type { AgentsService } from '@agt/contracts';
import type { MeshAgent } from '../directory.js';
import { detailsExtension, toolSkills, v03SecuritySchemes, v1SecuritySchemes } from './extended-card.js';

export const A2A_VERSION_HEADER = 'a2a-version';
/** An agent card's DID extension: `params.did` names the did:key that signs the card. */
export const DID_EXTENSION = 'urn:agt:a2a:did-key:v1';

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const strings = (value: unknown, max = 20): string[] =>
  Array.isArray(value)
    ? value
        .filter((item): item is string => typeof item === 'string' && item.length > 0 && item.length <= 200)
        .slice(0, max)
    : [];

export const rootOf = (base: string, handle: string) => `${base}/agents/${encodeURIComponent(handle)}`;
export const a2aUrlOf = (base: string, handle: string) => `${rootOf(base, handle)}/a2a`;
export const cardUrlOf = (base: string, handle: string) => `${rootOf(base, handle)}/.well-known/agent-card.json`;

/** A skill's tags, never empty: A2A requires the list (a v0.3 client refuses a card whose skill has none). */
const orTag = (tags: string[], fallback: string) => (tags.length > 0 ? tags : [fallback]);

/**
 * The agent's skills: `messaging.skills` of its config (`{id, name, description, tags?, examples?}`), else one made of
 * its name and description.
 */
export function skillsOf(agent: MeshAgent): Array<Record<string, unknown>> {
  const config = agent.view.config;
  const listed = Array.isArray(record(config.messaging).skills) ? (record(config.messaging).skills as unknown[]) : [];
  const skills = listed
    .map(record)
    .filter(
      (skill) => typeof skill.id === 'string' && skill.id !== '' && typeof skill.name === 'string' && skill.name !== '',
    )
    .slice(0, 50)
    .map((skill) => ({
      id: String(skill.id).slice(0, 100),
      name: String(skill.name).slice(0, 200),
      description: typeof skill.description === 'string' ? skill.description.slice(0, 2000) : '',
      tags: orTag(strings(skill.tags), String(skill.id).slice(0, 100)),
      examples: strings(skill.examples),
    }));
  if (skills.length > 0) return skills;
  return [
    {
      id: 'chat',
      name: agent.view.name,
      description: config.description ?? '',
      tags: orTag(strings(record(config.metadata).tags), 'chat'),
      examples: [],
    },
  ];
}

/**
 * Drops what §8.4.1 calls default values (empty strings, empty lists, empty objects, null), at any
 * depth; `false` and `0` stay (the card sets them only on purpose). The card is served in this form too.
 */
export function withoutDefaults(value: unknown): unknown {
  if (value === '' || value === null || value === undefined) return undefined;
  if (Array.isArray(value)) {
    const kept = value.map(withoutDefaults).filter((item) => item !== undefined);
    return kept.length > 0 ? kept : undefined;
  }
  if (typeof value === 'object') {
    const kept = Object.entries(value as Record<string, unknown>)
      .map(([key, inner]) => [key, withoutDefaults(inner)] as const)
      .filter(([, inner]) => inner !== undefined);
    return kept.length > 0 ? Object.fromEntries(kept) : undefined;
  }
  return value;
}

/** The bytes a card signature covers: canonical JSON of the card without `signatures` and defaults. */
export function cardPayload(card: Record<string, unknown>): Buffer {
  const { signatures: _signatures, ...rest } = card;
  return Buffer.from(canonicalJson(withoutDefaults(rest) ?? {}), 'utf8');
}

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');

/** The key id of a did:key (`did:key:z…#z…`, the DID URL of its one verification method). */
export const kidOf = (did: string) => `${did}#${did.slice('did:key:'.length)}`;

export interface CardOptions {
  /** `1.0`, or `0.3`: the v0.3 members added. Default `1.0`. */
  shape?: '1.0' | '0.3';
  /** The daemon checks the owner's credential (`ctx.auth`): the card declares the extended card and its scheme. */
  offersExtended?: boolean;
  /** The extended card itself, for the owner's credential: the agent's tools and details added (extended-card.ts). */
  extended?: boolean;
}

/**
 * The card of `agent` in the shape a client of `shape` reads (`1.0`, or `0.3`: the v0.3 members added), signed
 * as served when the agent has an identity and its key is reachable.
 */
export async function buildA2ACard(
  agents: AgentsService,
  agent: MeshAgent,
  base: string,
  version: string,
  options: CardOptions = {},
): Promise<Record<string, unknown>> {
  const shape = options.shape ?? '1.0';
  const v1 = v1Card(agent, base, version, options);
  const card = shape === '0.3' ? compatCard(v1) : v1;
  const did = agent.did;
  if (!did) return card;
  const header = b64url(JSON.stringify({ alg: 'EdDSA', typ: 'JOSE', kid: kidOf(did) }));
  const signed = async (over: Record<string, unknown>) => {
    const input = Buffer.from(`${header}.${b64url(cardPayload(over))}`, 'ascii');
    return { protected: header, signature: b64url(await agents.keys.sign(agent.view.id, input)) };
  };
  try {
    // The v0.3 shape carries two: one over the card as served (a verifier of the JSON it received), and one
    // over its v1.0 members (the v1.0 SDK reads any card through the v1.0 proto form, dropping the v0.3 ones).
    // A verifier accepts a card when one of its signatures verifies.
    const signatures = shape === '0.3' ? [await signed(card), await signed(v1Reading(v1))] : [await signed(card)];
    return { ...card, signatures };
  } catch {
    // Locked credentials: the card goes out unsigned (a verifier treats it as such).
    return card;
  }
}

/** The v1.0 card of `agent`, unsigned. */
function v1Card(agent: MeshAgent, base: string, version: string, options: CardOptions): Record<string, unknown> {
  const url = a2aUrlOf(base, agent.handle);
  const offers = options.offersExtended === true || options.extended === true;
  const extensions = [
    ...(agent.did
      ? [
          {
            uri: DID_EXTENSION,
            description: 'the did:key of this agent; it signs this card and its mesh messages',
            params: { did: agent.did },
          },
        ]
      : []),
    ...(options.extended ? [detailsExtension(agent)] : []),
  ];
  return withoutDefaults({
    name: agent.view.name,
    description: agent.view.config.description || agent.view.name,
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    version,
    capabilities: {
      streaming: true,
      pushNotifications: true,
      extensions,
      ...(offers ? { extendedAgentCard: true } : {}),
    },
    ...(offers ? { securitySchemes: v1SecuritySchemes() } : {}),
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [...skillsOf(agent), ...(options.extended ? toolSkills(agent) : [])],
  }) as Record<string, unknown>;
}

/**
 * What a v1.0 reader makes of the v0.3 shape: the v1.0 members, less `securitySchemes` (the v0.3 shape has them in
 * the v0.3 form, which the v1.0 form does not read).
 */
function v1Reading(v1: Record<string, unknown>): Record<string, unknown> {
  const { securitySchemes: _schemes, ...rest } = v1;
  return rest;
}

/** The v0.3 reading of an unsigned v1.0 card: the v0.3 members added (the SDK's compat card with its v1.0 interfaces kept). */
function compatCard(card: Record<string, unknown>): Record<string, unknown> {
  const legacy = (card.supportedInterfaces as Array<Record<string, unknown>>).find(
    (item) => item.protocolVersion === '0.3',
  )!;
  const extended = record(card.capabilities).extendedAgentCard === true;
  return {
    ...card,
    url: legacy.url,
    preferredTransport: 'JSONRPC',
    protocolVersion: '0.3',
    ...(extended ? { supportsAuthenticatedExtendedCard: true, securitySchemes: v03SecuritySchemes() } : {}),
  };
}

/** Whether the request asks for the v1.0 card (`A2A-Version: 1.x`). */
export const wantsV1 = (header: string | string[] | undefined) => /^\s*1(\.\d+)?\s*$/.test([header].flat()[0] ?? '');

export type CardCheck = { status: 'valid'; did: string } | { status: 'unsigned' } | { status: 'invalid'; why: string };

/**
 * Checks a card's signatures (§8.4.3) with the key its `kid` names, when that is a did:key (the only
 * keys this daemon resolves: it fetches no `jku`). Valid when one signature verifies; a card that
 * also names a DID in its DID extension must name the same one.
 */
export function verifyA2ACard(card: Record<string, unknown>): CardCheck {
  const signatures = Array.isArray(card.signatures) ? card.signatures.map(record) : [];
  if (signatures.length === 0) return { status: 'unsigned' };
  const extensions = Array.isArray(record(card.capabilities).extensions)
    ? (record(card.capabilities).extensions as unknown[]).map(record)
    : [];
  const claimed = extensions.find((extension) => extension.uri === DID_EXTENSION);
  const claimedDid = claimed ? record(claimed.params).did : undefined;
  const payload = b64url(cardPayload(card));
  let why = 'no signature verifies';
  for (const entry of signatures) {
    if (typeof entry.protected !== 'string' || typeof entry.signature !== 'string') continue;
    let header: Record<string, unknown>;
    try {
      header = record(JSON.parse(Buffer.from(entry.protected, 'base64url').toString('utf8')));
    } catch {
      continue;
    }
    const did = typeof header.kid === 'string' ? header.kid.split('#')[0]! : '';
    if ((header.alg !== 'EdDSA' && header.alg !== 'Ed25519') || !isEd25519Did(did) || !publicKeyFromDid(did)) {
      why = 'no signature by a did:key (EdDSA) this daemon can check';
      continue;
    }
    if (claimedDid !== undefined && claimedDid !== did) {
      why = 'the signing key is not the DID the card names';
      continue;
    }
    const signature = Buffer.from(entry.signature, 'base64url');
    if (
      signature.length === 64 &&
      verifyDidSignature(did, Buffer.from(`${entry.protected}.${payload}`, 'ascii'), signature)
    )
      return { status: 'valid', did };
  }
  return { status: 'invalid', why };
}
