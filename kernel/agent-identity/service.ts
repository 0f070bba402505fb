/**
 * Agent identity (`kernel.agentIdentity`, route group "Identity (agent)"): each agent has its own
 * Ed25519 key pair. Stored in the file's `agt_identity` table:
 * - `agent.did`: the agent's `did:key` (public);
 * - `agent.key`: the 32-byte Ed25519 seed, secretboxed under the credentials envelope's data key, so it
 *   is exactly as protected as the agent's credentials (owner + runtime wraps, and the password when
 *   the agent has one);
 * - `agent.attestations`: the owner attestation and the runtime stamp (attestations.ts).
 * Reads describe DIDs and signatures only; the secret key never leaves this file's functions.
 */
import nacl from 'tweetnacl';
import type { AgentConfig, EventBus } from '@agt/contracts';
import type { ReviewIdentity } from '../http-api/agents-api.js';
import type { AgentFile } from '../agents/agent-file.js';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import type { AgentRegistry } from '../agents/registry.js';
import {
  createPasswordEnvelope,
  createPlainEnvelope,
  ENVELOPE_KEY,
  openWithKey,
  sealWithKey,
  serializeEnvelope,
  type Envelope,
} from '../credentials/envelope.js';
import type { CredentialsService } from '../credentials/service.js';
import { didKeyFromEd25519, ed25519FromDidKey, isEd25519DidKey } from '../identity/did-key.js';
import { signDetached, signKeyPairFromSeed } from '../identity/nacl-node.js';
import { requireReadyIdentity } from '../identity/index.js';
import type { IdentityService } from '../identity/types.js';
import { agentKeyUnavailable } from './errors.js';
import {
  attest,
  parseAttestations,
  verifyAttestation,
  type AttestationKind,
  type AttestationRecord,
} from './attestations.js';

import { AGENT_DID_KEY, AGENT_SECRET_KEY } from '../agents/agent-key.js';

export { AGENT_DID_KEY, AGENT_SECRET_KEY };
export const ATTESTATIONS_KEY = 'agent.attestations';

/**
 * How the file relates to this daemon's owner: `mine` (a valid owner attestation by this owner),
 * `foreign` (a valid one by another owner), `invalid` (an owner attestation that does not verify for this
 * DID and id: tampered or copied), `unclaimed` (no agent DID or no owner attestation).
 */
export type IdentityScenario = 'mine' | 'foreign' | 'invalid' | 'unclaimed';

export interface AttestationView {
  kind: AttestationKind;
  by: string;
  signature: string;
  created_at: number;
  valid: boolean;
}

export interface AgentIdentityView {
  agentId: string;
  did: string | null;
  ownerDid: string | null;
  ownerIsYou: boolean;
  scenario: IdentityScenario;
  runtimeDid: string | null;
  runtimeIsThis: boolean;
  attestations: AttestationView[];
}

export interface AgentIdentityDeps {
  identity: IdentityService;
  credentials: CredentialsService;
  registry: AgentRegistry;
  bus: EventBus;
}

interface SealedSecret {
  envelope: string;
  sealed: string;
}

export class AgentIdentityService {
  constructor(private readonly deps: AgentIdentityDeps) {}

  /** What the file says about the agent's identity, every attestation checked. Works on read-only files. */
  describe(file: AgentFile, agentId: string): AgentIdentityView {
    const did = file.identity.get(AGENT_DID_KEY)?.toString('utf8') ?? null;
    const records = parseAttestations(file.identity.get(ATTESTATIONS_KEY));
    const attestations = records.map((record) => ({
      kind: record.kind,
      by: record.by,
      signature: record.signature,
      created_at: record.created_at,
      valid: verifyAttestation(record, did, agentId),
    }));
    const owner = attestations.find((item) => item.kind === 'owner');
    const runtime = attestations.find((item) => item.kind === 'runtime');
    const thisOwner = this.deps.identity.ownerDid;
    const scenario: IdentityScenario =
      !did || !owner ? 'unclaimed' : !owner.valid ? 'invalid' : owner.by === thisOwner ? 'mine' : 'foreign';
    return {
      agentId,
      did,
      ownerDid: owner?.by ?? null,
      ownerIsYou: scenario === 'mine',
      scenario,
      runtimeDid: runtime?.by ?? null,
      runtimeIsThis: runtime?.valid === true && runtime.by === this.deps.identity.runtimeDid,
      attestations,
    };
  }

  /** The identity part of the review summary (installed as `registry.reviewIdentity`). */
  reviewIdentity(file: AgentFile, config: Readonly<AgentConfig>): ReviewIdentity {
    const view = this.describe(file, config.id);
    return { agentDid: view.did, fileOwnerDid: view.ownerDid, ownerIsYou: view.ownerIsYou, scenario: view.scenario };
  }

  /**
   * Create-agent: writes the credentials envelope (password-protected when `password` is given) and a
   * fresh identity with owner attestation and runtime stamp into a new file. Needs a ready owner
   * (409 `identity_not_ready`). Returns the data key so the creator can keep a password agent unlocked.
   */
  async initialize(
    file: AgentFile,
    agentId: string,
    password?: string,
  ): Promise<{ did: string; envelope: Envelope; dataKey: Uint8Array }> {
    requireReadyIdentity(this.deps, 'creating an agent');
    const { envelope, dataKey } =
      password === undefined
        ? createPlainEnvelope(this.deps.identity)
        : await createPasswordEnvelope(this.deps.identity, password);
    const stored = serializeEnvelope(envelope);
    const did = file.transaction(() => {
      file.identity.put(ENVELOPE_KEY, stored);
      return this.issue(file, agentId, envelope, dataKey);
    });
    // The load's credentials check then knows it opens without opening it (the creator forgets it when the create
    // fails).
    this.deps.credentials.keys.sealedHere(agentId, envelope, stored);
    return { did, envelope, dataKey };
  }

  /**
   * A new key pair and fresh attestations for a loaded agent. 409 `identity_not_ready` unless the owner
   * is ready; 409 `credentials_locked` while the envelope is locked (the new secret key is sealed in it).
   */
  regenerate(agent: LoadedAgent): AgentIdentityView {
    requireReadyIdentity(this.deps, 'regenerating an agent identity');
    const { envelope, dataKey } = this.deps.credentials.keys.ensure(agent);
    const previous = agent.file.identity.get(AGENT_DID_KEY)?.toString('utf8') ?? null;
    const did = agent.file.transaction(() => this.issue(agent.file, agent.id, envelope, dataKey));
    // The owner's act: the agent's id is bound to its new key (a file with the old one is another agent now).
    this.deps.registry.rekeyed(agent);
    this.deps.registry.log(agent, {
      level: 'info',
      origin: 'kernel',
      event: 'identity_regenerated',
      message: `agent identity ${previous ? 'regenerated' : 'generated'}: ${did}`,
      data: { did, previous },
    });
    this.deps.bus.emit('agent.identity.changed', { agentId: agent.id, payload: { did } });
    return this.describe(agent.file, agent.id);
  }

  /** Signs `message` with the agent's own key; null when it has none or the envelope is locked. */
  sign(agent: LoadedAgent, message: Uint8Array): Uint8Array | null {
    const access = this.deps.credentials.keys.access(agent);
    if (!access.ok || !access.envelope) return null;
    const stored = parseSecret(agent.file.identity.get(AGENT_SECRET_KEY));
    if (!stored || stored.envelope !== access.envelope.id) return null;
    const seed = openWithKey(access.dataKey, Buffer.from(stored.sealed, 'base64'));
    if (!seed || seed.length !== nacl.sign.seedLength) return null;
    const pair = signKeyPairFromSeed(seed);
    seed.fill(0);
    const signature = signDetached(message, pair.secretKey);
    pair.secretKey.fill(0);
    return signature;
  }

  /** The agent's DID and public key (`ctx.agents.keys.identity`); undefined when it has no identity. */
  publicIdentity(agent: LoadedAgent): { did: string; publicKey: Uint8Array } | undefined {
    const did = agent.file.identity.get(AGENT_DID_KEY)?.toString('utf8');
    if (!did || !isEd25519DidKey(did)) return undefined;
    return { did, publicKey: ed25519FromDidKey(did) };
  }

  /** {@link sign} for extensions: 409 `credentials_locked` instead of null when the key is out of reach. */
  signOrThrow(agent: LoadedAgent, message: Uint8Array): Uint8Array {
    const signature = this.sign(agent, message);
    if (!signature) throw agentKeyUnavailable(agent.id);
    return signature;
  }

  /** Writes key pair and attestations (inside the caller's transaction); returns the new DID. */
  private issue(file: AgentFile, agentId: string, envelope: Envelope, dataKey: Uint8Array): string {
    const seed = nacl.randomBytes(nacl.sign.seedLength);
    const pair = signKeyPairFromSeed(seed);
    const did = didKeyFromEd25519(pair.publicKey);
    const secret: SealedSecret = { envelope: envelope.id, sealed: sealWithKey(dataKey, seed).toString('base64') };
    seed.fill(0);
    pair.secretKey.fill(0);
    const { identity } = this.deps;
    const now = Date.now();
    const records: AttestationRecord[] = [
      attest('owner', identity.ownerDid!, did, agentId, (bytes) => identity.ownerSign(bytes), now),
      attest('runtime', identity.runtimeDid, did, agentId, (bytes) => identity.runtimeSign(bytes), now),
    ];
    file.identity.put(AGENT_DID_KEY, did);
    file.identity.put(AGENT_SECRET_KEY, JSON.stringify(secret));
    file.identity.put(ATTESTATIONS_KEY, JSON.stringify(records));
    return did;
  }
}

function parseSecret(raw: Buffer | undefined): SealedSecret | null {
  if (!raw) return null;
  try {
    const value = JSON.parse(raw.toString('utf8')) as SealedSecret;
    return typeof value?.envelope === 'string' && typeof value.sealed === 'string' ? value : null;
  } catch {
    return null;
  }
}
