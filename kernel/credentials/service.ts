/**
 * The credentials service (`kernel.credentials`): sealed per-agent credentials (docs/credentials.md). Values are
 * secretboxed under the envelope's data key (envelope.ts) in `agt_credentials`; responses, logs and
 * events carry names and metadata only, never a value.
 *
 * Scope: every operation takes one loaded agent and touches only that agent's file, so nothing can
 * read another agent's credentials through it; `kernel.agents.readCredential(agentId, name)` is bound
 * to the agent id its caller names (extensions act for the agent they serve), and agent code (tools,
 * lambdas) is never handed this service.
 */
import type { EventBus, Logger } from '@agt/contracts';
import type { LoadedAgent } from '../agents/loaded-agent.js';
import type { AgentRegistry } from '../agents/registry.js';
import type { CredentialMeta } from '../agents/stores/secret-stores.js';
import type { IdentityService } from '../identity/types.js';
import { DegradedWatcher } from './degraded.js';
import { openWithKey, sealWithKey, type Envelope } from './envelope.js';
import { credentialsLocked } from './errors.js';
import { EnvelopeKeys, isPasswordProtected, type EnvelopeState } from './key-access.js';
import { openPending, sealPending } from './pending.js';

/** Credential names: `provider:<id>`, `channel:telegram`, `mcp:github.token`, ... (no `/`: names travel in paths). */
export const CREDENTIAL_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9:_.-]{0,127}$';
export const MAX_CREDENTIAL_BYTES = 64 * 1024;

/** What routes return about one credential. */
export interface CredentialInfo {
  name: string;
  /** True when a value is stored (sealed or waiting to be sealed). */
  set: boolean;
  /** True when the value is sealed in the envelope; false while a replaced value waits for it to unlock. */
  sealed: boolean;
  /** True when the value cannot be read now (the envelope is locked). */
  locked: boolean;
  /** Length of the value in characters. */
  length: number;
  updated_at: number | null;
}

export interface CredentialsDeps {
  identity: IdentityService;
  registry: AgentRegistry;
  bus: EventBus;
  logger: Logger;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class CredentialsService {
  readonly keys: EnvelopeKeys;
  /** Keeps the degraded flag of loaded agents current; started by the credentials module. */
  readonly watcher: DegradedWatcher;

  constructor(private readonly deps: CredentialsDeps) {
    this.keys = new EnvelopeKeys(deps.identity, (agent) => deps.registry.list().includes(agent));
    this.watcher = new DegradedWatcher({
      registry: deps.registry,
      credentials: {
        state: (agent) => this.state(agent),
        sealPending: (agent) => void this.sealPending(agent),
        forget: (agentId) => void this.keys.forget(agentId),
      },
      bus: deps.bus,
      logger: deps.logger,
      onIdentityChange: (listener) => deps.identity.onChange(listener),
    });
  }

  state(agent: LoadedAgent): EnvelopeState {
    return this.keys.state(agent);
  }

  /** Metadata of every credential of the agent. */
  list(agent: LoadedAgent): { state: EnvelopeState; credentials: CredentialInfo[] } {
    const state = this.state(agent);
    return { state, credentials: agent.file.credentials.list().map((meta) => info(meta, state.locked)) };
  }

  /** Metadata of one credential; `set: false` when there is none. */
  info(agent: LoadedAgent, name: string): CredentialInfo {
    const meta = agent.file.credentials.meta(name);
    const locked = this.state(agent).locked;
    return meta ? info(meta, locked) : { name, set: false, sealed: false, locked, length: 0, updated_at: null };
  }

  /**
   * Stores a value. Unlocked: sealed at once. Locked: 409 `credentials_locked`, unless `replace` is true:
   * then the old value is discarded unread and the new one is kept pending (pending.ts) until the
   * envelope opens, and `credential_replaced` is logged to the agent's `agt_logs`.
   */
  set(agent: LoadedAgent, name: string, value: string, replace = false): CredentialInfo {
    const access = this.keys.access(agent);
    if (access.ok) {
      const { envelope, dataKey } = access.envelope ? access : this.keys.ensure(agent);
      this.sealPendingValues(agent, envelope, dataKey);
      this.writeSealed(agent, envelope, dataKey, name, value);
      this.deps.registry.log(agent, {
        level: 'info',
        origin: 'kernel',
        event: 'credential_set',
        message: `credential "${name}" set (sealed)`,
        data: { name },
      });
      this.deps.bus.emit('credential.changed', { agentId: agent.id, payload: { name, action: 'set' } });
      return this.info(agent, name);
    }
    if (!replace) throw credentialsLocked(agent.id, access.reason);
    const existed = agent.file.credentials.meta(name) !== undefined;
    agent.file.credentials.write(name, sealPending(this.deps.identity, value), {
      sealed: false,
      length: value.length,
      meta: { pending: true },
    });
    this.deps.registry.log(agent, {
      level: 'warn',
      origin: 'kernel',
      event: 'credential_replaced',
      message: `credential "${name}" replaced while the credentials were locked (${access.reason})${existed ? '; the old value was discarded unread' : ''}; it is sealed once they unlock`,
      data: { name, reason: access.reason, discardedOld: existed },
    });
    this.deps.bus.emit('credential.changed', { agentId: agent.id, payload: { name, action: 'replaced' } });
    return this.info(agent, name);
  }

  /** Deletes a credential (allowed while locked: nothing is read). False when there was none. */
  delete(agent: LoadedAgent, name: string): boolean {
    const deleted = agent.file.credentials.delete(name);
    if (deleted) {
      this.deps.registry.log(agent, {
        level: 'info',
        origin: 'kernel',
        event: 'credential_deleted',
        message: `credential "${name}" deleted`,
        data: { name },
      });
      this.deps.bus.emit('credential.changed', { agentId: agent.id, payload: { name, action: 'deleted' } });
    }
    return deleted;
  }

  /** The decrypted value; undefined when unset or locked. For `registry.credentialReader` only. */
  read(agent: LoadedAgent, name: string): string | undefined {
    const access = this.keys.access(agent);
    if (!access.ok || !access.envelope) return undefined;
    this.sealPendingValues(agent, access.envelope, access.dataKey);
    const row = agent.file.credentials.read(name);
    if (!row?.sealed || row.meta?.envelope !== access.envelope.id) return undefined;
    const plaintext = openWithKey(access.dataKey, row.value);
    if (!plaintext) return undefined;
    const value = decoder.decode(plaintext);
    plaintext.fill(0);
    return value;
  }

  /**
   * Moves pending (replaced-while-locked) values into the envelope once it is open. Called on every
   * access and by the degraded watcher; a value neither this runtime nor the owner can open stays pending.
   */
  sealPending(agent: LoadedAgent): number {
    // Nothing waits to be sealed (the usual case): no need to open the envelope.
    if (agent.file.credentials.list().every((meta) => meta.sealed)) return 0;
    const access = this.keys.access(agent);
    if (!access.ok || !access.envelope) return 0;
    return this.sealPendingValues(agent, access.envelope, access.dataKey);
  }

  isPasswordProtected(agent: LoadedAgent): boolean {
    return isPasswordProtected(agent.file);
  }

  private sealPendingValues(agent: LoadedAgent, envelope: Envelope, dataKey: Uint8Array): number {
    let sealed = 0;
    for (const meta of agent.file.credentials.list()) {
      if (meta.sealed) continue;
      const row = agent.file.credentials.read(meta.name);
      const value = row && openPending(this.deps.identity, row.value);
      if (value === null || value === undefined) continue;
      this.writeSealed(agent, envelope, dataKey, meta.name, value);
      sealed += 1;
      this.deps.registry.log(agent, {
        level: 'info',
        origin: 'kernel',
        event: 'credential_sealed',
        message: `replaced credential "${meta.name}" sealed now that the credentials are unlocked`,
        data: { name: meta.name },
      });
      this.deps.bus.emit('credential.changed', { agentId: agent.id, payload: { name: meta.name, action: 'sealed' } });
    }
    return sealed;
  }

  private writeSealed(agent: LoadedAgent, envelope: Envelope, dataKey: Uint8Array, name: string, value: string): void {
    const plaintext = encoder.encode(value);
    const stored = sealWithKey(dataKey, plaintext);
    plaintext.fill(0);
    agent.file.credentials.write(name, stored, { sealed: true, length: value.length, meta: { envelope: envelope.id } });
  }
}

function info(meta: CredentialMeta, locked: boolean): CredentialInfo {
  return { name: meta.name, set: true, sealed: meta.sealed, locked, length: meta.length, updated_at: meta.updated_at };
}
