/**
 * When an agent's envelope opens, and with which key. "Locked" means the data key cannot be had right
 * now, for one of the {@link LockReason}s:
 * - `password`: a password-protected agent not unlocked since it was loaded (`POST
 *   /agents/{id}/credentials/unlock`); the password-derived key is held in memory per loaded agent only;
 * - `owner_locked`: the runtime wrap was made for another runtime (the file comes from another
 *   installation) and only the owner's wrap fits, but the owner identity is not ready;
 * - `foreign`: no wrap fits this runtime or this owner;
 * - `damaged`: the envelope record is unreadable.
 * An envelope created on this daemon always opens through its runtime wrap, so for such an agent only
 * a password can lock it. When the owner's wrap opened it, the envelope is adopted (a wrap for this
 * runtime is added), so it stays open after the owner locks and after restarts.
 */
import type { AgentFile } from '../agents/agent-file.js';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import type { IdentityService } from '../identity/types.js';
import {
  adoptEnvelope,
  createPlainEnvelope,
  derivePasswordKey,
  ENVELOPE_KEY,
  openWrapKey,
  parseEnvelope,
  passwordDataKey,
  serializeEnvelope,
  type Envelope,
  type LockReason,
} from './envelope.js';
import {
  credentialsLocked,
  notPasswordProtected,
  ownerWrapNeeded,
  unloadedDuringUnlock,
  wrongAgentPassword,
} from './errors.js';

export type KeyAccess = { ok: true; envelope: Envelope; dataKey: Uint8Array } | { ok: false; reason: LockReason };

export interface EnvelopeState {
  /** False for a file that has no envelope yet (nothing sealed); it is created at the first write. */
  exists: boolean;
  locked: boolean;
  reason: LockReason | null;
  passwordProtected: boolean;
}

export function readEnvelope(file: AgentFile): Envelope | null | 'malformed' {
  return parseEnvelope(file.identity.get(ENVELOPE_KEY));
}

/**
 * True when the file's envelope needs a password: such agents are never autostarted (nobody is there to type the
 * password).
 */
export function isPasswordProtected(file: AgentFile): boolean {
  const envelope = readEnvelope(file);
  return envelope !== null && envelope !== 'malformed' && envelope.password !== undefined;
}

export class EnvelopeKeys {
  /** Data keys of password-protected agents unlocked since load, by agent id. Memory only. */
  private readonly unlocked = new Map<string, { envelopeId: string; dataKey: Uint8Array }>();
  /**
   * The stored text of each loaded agent's envelope once it opened through this runtime's wrap (no
   * password): the same text opens the same way every time (the runtime's key does not change while the
   * daemon runs), so {@link state} answers for it without opening the sealed wrap key again (the
   * degraded check runs at every load and every minute for every agent). Holds no key. Dropped by
   * {@link forget}; a changed record (adopted, replaced) is opened and remembered again.
   */
  private readonly openedByRuntime = new Map<string, string>();

  constructor(
    private readonly identity: IdentityService,
    /** True while `agent` is still the loaded instance (an unload may happen during the KDF). */
    private readonly isLoaded: (agent: LoadedAgent) => boolean = () => true,
  ) {}

  /** The data key, or why the envelope is locked; `envelope: null` when the file has none yet (see {@link ensure}). */
  access(agent: LoadedAgent): KeyAccess | { ok: true; envelope: null; dataKey: null } {
    const raw = agent.file.identity.get(ENVELOPE_KEY);
    return this.accessTo(agent, parseEnvelope(raw), raw);
  }

  private accessTo(
    agent: LoadedAgent,
    envelope: Envelope | null | 'malformed',
    raw: Buffer | undefined,
  ): KeyAccess | { ok: true; envelope: null; dataKey: null } {
    if (envelope === null) return { ok: true, envelope: null, dataKey: null };
    if (envelope === 'malformed') return { ok: false, reason: 'damaged' };
    const cached = this.unlocked.get(agent.id);
    if (envelope.password && cached?.envelopeId === envelope.id) return { ok: true, envelope, dataKey: cached.dataKey };
    const wrap = openWrapKey(envelope, this.identity);
    if (!wrap.ok) return { ok: false, reason: wrap.reason };
    const current = wrap.via === 'owner' ? this.adopt(agent.file, envelope, wrap.kw) : envelope;
    if (envelope.password) {
      wrap.kw.fill(0);
      return { ok: false, reason: 'password' };
    }
    if (wrap.via === 'runtime' && raw !== undefined) this.openedByRuntime.set(agent.id, raw.toString('utf8'));
    return { ok: true, envelope: current, dataKey: wrap.kw };
  }

  /** The data key, creating the envelope (no password) when the file has none; 409 `credentials_locked` when locked. */
  ensure(agent: LoadedAgent): { envelope: Envelope; dataKey: Uint8Array } {
    const access = this.access(agent);
    if (!access.ok) throw credentialsLocked(agent.id, access.reason);
    if (access.envelope) return access;
    return this.createFor(agent.file);
  }

  state(agent: LoadedAgent): EnvelopeState {
    const raw = agent.file.identity.get(ENVELOPE_KEY);
    const envelope = parseEnvelope(raw);
    const passwordProtected = envelope !== null && envelope !== 'malformed' && envelope.password !== undefined;
    if (
      envelope !== null &&
      envelope !== 'malformed' &&
      !passwordProtected &&
      this.openedByRuntime.get(agent.id) === raw?.toString('utf8')
    ) {
      return { exists: true, locked: false, reason: null, passwordProtected };
    }
    const access = this.accessTo(agent, envelope, raw);
    // A plain envelope's key was opened for this answer only (a password agent's is the unlocked one, kept).
    if (access.ok && access.dataKey && !passwordProtected) access.dataKey.fill(0);
    return {
      exists: envelope !== null,
      locked: !access.ok,
      reason: access.ok ? null : access.reason,
      passwordProtected,
    };
  }

  /**
   * Unlocks a password-protected agent for as long as it stays loaded. 409 `conflict` when it has no
   * password; 409 `identity_not_ready` / `credentials_locked` when the wrap key itself is out of reach
   * (the password cannot even be checked then); 403 `wrong_password`.
   */
  async unlock(agent: LoadedAgent, password: string): Promise<void> {
    const envelope = readEnvelope(agent.file);
    if (envelope === 'malformed') throw credentialsLocked(agent.id, 'damaged');
    if (!envelope?.password) throw notPasswordProtected(agent.id);
    const passwordKey = await derivePasswordKey(envelope, password);
    try {
      const wrap = openWrapKey(envelope, this.identity);
      if (!wrap.ok) {
        if (wrap.reason === 'owner_locked') {
          throw ownerWrapNeeded(agent.id, this.identity.status());
        }
        throw credentialsLocked(agent.id, wrap.reason);
      }
      const dataKey = passwordDataKey(envelope, wrap.kw, passwordKey);
      if (wrap.via === 'owner') this.adopt(agent.file, envelope, wrap.kw);
      wrap.kw.fill(0);
      if (!dataKey) throw wrongAgentPassword(agent.id);
      // Unloaded while the KDF ran: keeping the key would unlock a later load without its password.
      if (!this.isLoaded(agent)) {
        dataKey.fill(0);
        throw unloadedDuringUnlock(agent.id);
      }
      this.unlocked.set(agent.id, { envelopeId: envelope.id, dataKey });
    } finally {
      passwordKey.fill(0);
    }
  }

  /** Forgets the unlocked key of a password-protected agent (lock route, unload). */
  forget(agentId: string): boolean {
    this.openedByRuntime.delete(agentId);
    const entry = this.unlocked.get(agentId);
    entry?.dataKey.fill(0);
    return this.unlocked.delete(agentId);
  }

  /** Create-agent: the fresh password agent starts unlocked (its creator just gave the password). */
  prime(agentId: string, envelopeId: string, dataKey: Uint8Array): void {
    this.unlocked.set(agentId, { envelopeId, dataKey: dataKey.slice() });
  }

  /**
   * Create-agent: a plain envelope this runtime has just sealed to itself (`stored` is its text in the
   * file) opens through this runtime's wrap by construction, so the first {@link state} (at the load that
   * follows) need not open it to know. A password envelope is never remembered here.
   */
  sealedHere(agentId: string, envelope: Envelope, stored: string): void {
    if (envelope.password === undefined && envelope.wraps.runtime?.did === this.identity.runtimeDid)
      this.openedByRuntime.set(agentId, stored);
  }

  /** Forgets every unlocked key (shutdown). */
  clear(): void {
    for (const agentId of [...this.unlocked.keys()]) this.forget(agentId);
    this.openedByRuntime.clear();
  }

  private createFor(file: AgentFile): { envelope: Envelope; dataKey: Uint8Array } {
    // Synchronous (no KDF without a password), so no other request's write can interleave.
    const created = createPlainEnvelope(this.identity);
    file.identity.put(ENVELOPE_KEY, serializeEnvelope(created.envelope));
    return created;
  }

  private adopt(file: AgentFile, envelope: Envelope, kw: Uint8Array): Envelope {
    const adopted = adoptEnvelope(envelope, this.identity, kw);
    if (!adopted) return envelope;
    file.identity.put(ENVELOPE_KEY, serializeEnvelope(adopted));
    return adopted;
  }
}
