/**
 * One adapter of one agent, kept connected: `start` connects in the background (status `connecting`),
 * a failed connect or a dropped connection is retried with backoff, a permanent failure (credentials
 * refused, missing or locked) is status `error` until something changes, `stop` releases everything.
 * Each connect attempt gets its own host and generation, so callbacks of an adapter that was replaced
 * or stopped change nothing.
 */
import type { Logger } from '@agt/contracts';
import {
  AdapterConnectError,
  type AdapterHost,
  type AdapterInbound,
  type AdapterStatus,
  type AdapterType,
  type ChannelAdapter,
  type TaskPress,
} from './adapter.js';
import { backoffDelay } from './backoff.js';

export interface InstanceSettings {
  config: Record<string, unknown>;
  policy: Record<string, unknown> | undefined;
  maxAttachmentSize: number;
}

export interface InstanceDeps {
  receive(instance: AdapterInstance, message: AdapterInbound): Promise<void>;
  readCredential(agentId: string, name: string): Promise<string | undefined>;
  logger: Logger;
  options: Readonly<Record<string, unknown>>;
  reconnectBaseMs: number;
  reconnectMaxMs: number;
  /** A connect attempt that has not finished by then fails (a silent network would hold it for minutes). */
  connectTimeoutMs: number;
  /** The instance is connected (first connect or a recovery): the owner's open tasks are offered. */
  connected?(instance: AdapterInstance): void;
  /** A press of a task prompt's button (owner-tasks.ts). */
  answerTask?(instance: AdapterInstance, press: TaskPress): Promise<{ ok: boolean; message: string }>;
}

export interface RecentError {
  at: number;
  message: string;
}

const MAX_RECENT = 10;
const message = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 500);

export class AdapterInstance {
  status: AdapterStatus = 'disconnected';
  error: string | undefined;
  connectedAt: number | undefined;
  restartCount = 0;
  readonly recentErrors: RecentError[] = [];
  private adapter: ChannelAdapter | undefined;
  private generation = 0;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly agentId: string,
    readonly kind: AdapterType,
    /** `policy` is replaced in place when only it changes (no reconnect for that). */
    readonly settings: InstanceSettings,
    private readonly deps: InstanceDeps,
  ) {}

  get type(): string {
    return this.kind.type;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.failures = 0;
    void this.connect(++this.generation);
  }

  async stop(): Promise<void> {
    this.running = false;
    this.generation++;
    clearTimeout(this.timer);
    this.timer = undefined;
    const adapter = this.adapter;
    this.adapter = undefined;
    await this.release(adapter);
    this.setStatus('disconnected');
    this.connectedAt = undefined;
  }

  async restart(): Promise<void> {
    await this.stop();
    this.restartCount++;
    this.error = undefined;
    this.start();
  }

  /** The connected adapter, or undefined (the outbox waits with {@link whenChanged} and tries again). */
  connectedAdapter(): ChannelAdapter | undefined {
    return this.status === 'connected' ? this.adapter : undefined;
  }

  /** Resolves at the next status change (or after `ms`): senders wait here for a reconnect. */
  whenChanged(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  get stopped(): boolean {
    return !this.running;
  }

  private setStatus(status: AdapterStatus): void {
    if (this.status === status) return;
    this.status = status;
    for (const waiter of [...this.waiters]) waiter();
    if (status === 'connected') this.deps.connected?.(this);
  }

  private recordError(text: string): void {
    this.recentErrors.push({ at: Date.now(), message: text });
    if (this.recentErrors.length > MAX_RECENT) this.recentErrors.shift();
  }

  private async connect(generation: number): Promise<void> {
    // A retry after a failure stays `error` (with its reason) until it succeeds: a platform that cannot
    // be reached must not look like one that is about to answer.
    if (this.status !== 'error') this.setStatus('connecting');
    let adapter: ChannelAdapter | undefined;
    try {
      adapter = this.kind.create(this.host(generation));
      this.adapter = adapter;
      await withDeadline(adapter.connect(), this.deps.connectTimeoutMs);
      if (generation !== this.generation) {
        await this.release(adapter);
        return;
      }
      this.failures = 0;
      this.error = undefined;
      this.connectedAt = Date.now();
      this.setStatus('connected');
      this.deps.logger.info({ agentId: this.agentId, adapter: this.type }, 'channel adapter connected');
    } catch (error) {
      if (this.adapter === adapter) this.adapter = undefined;
      await this.release(adapter);
      if (generation !== this.generation) return;
      const text = message(error);
      this.error = text;
      this.recordError(text);
      this.setStatus('error');
      if (error instanceof AdapterConnectError) {
        this.deps.logger.warn(
          { agentId: this.agentId, adapter: this.type, reason: text },
          'channel adapter cannot connect',
        );
        return;
      }
      const delay = this.retryLater(generation);
      // One line per failed attempt (the backoff spaces them out to one a minute at most), no stack: an
      // unreachable platform is an expected condition.
      this.deps.logger.warn(
        { agentId: this.agentId, adapter: this.type, reason: text, attempt: this.failures, retryInMs: delay },
        'channel adapter cannot reach its platform; retrying',
      );
    }
  }

  /** Schedules the next connect attempt; returns its delay. The status is left as it is. */
  private retryLater(generation: number): number {
    const delay = backoffDelay(this.failures++, this.deps.reconnectBaseMs, this.deps.reconnectMaxMs);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (generation === this.generation && this.running) void this.connect(++this.generation);
    }, delay);
    return delay;
  }

  private async release(adapter: ChannelAdapter | undefined): Promise<void> {
    if (!adapter) return;
    try {
      await adapter.disconnect();
    } catch (error) {
      this.deps.logger.warn(
        { agentId: this.agentId, adapter: this.type, err: message(error) },
        'channel adapter disconnect failed',
      );
    }
  }

  private host(generation: number): AdapterHost {
    const current = () => generation === this.generation && this.running;
    const logger = this.deps.logger.child({ agentId: this.agentId, adapter: this.type });
    return {
      agentId: this.agentId,
      type: this.type,
      config: this.settings.config,
      options: this.deps.options,
      credential: async (key) => {
        const name = `adapter:${this.type}:${key}`;
        const value = await this.deps.readCredential(this.agentId, name);
        if (value === undefined || value === '') {
          throw new AdapterConnectError(
            `the agent credential ${name} is not set, or the agent's credentials are locked (set it with PUT /agents/{id}/credentials/${name}, or unlock the owner identity)`,
          );
        }
        return value;
      },
      receive: async (inbound) => {
        if (!this.running) return;
        try {
          await this.deps.receive(this, inbound);
        } catch (error) {
          this.deps.logger.warn(
            { agentId: this.agentId, adapter: this.type, err: message(error) },
            'inbound message not delivered',
          );
        }
      },
      lost: (reason, options = {}) => {
        if (!current()) return;
        const text = `connection lost: ${reason}`.slice(0, 500);
        this.recordError(text);
        this.error = text;
        this.connectedAt = undefined;
        this.restartCount++;
        if (options.recovering) {
          this.setStatus('connecting');
          return;
        }
        const adapter = this.adapter;
        this.adapter = undefined;
        this.deps.logger.warn(
          { agentId: this.agentId, adapter: this.type, reason: text },
          'channel adapter lost its connection; reconnecting',
        );
        void this.release(adapter).then(() => {
          if (current()) this.retryLater(generation);
        });
        this.setStatus('connecting');
      },
      connected: () => {
        if (!current() || this.status === 'connected' || !this.adapter) return;
        this.error = undefined;
        this.connectedAt = Date.now();
        this.setStatus('connected');
      },
      logger,
      ...(this.deps.answerTask
        ? {
            answerTask: async (press: TaskPress) => {
              if (!current()) return { ok: false, message: 'This adapter is restarting; try again.' };
              return this.deps.answerTask!(this, press);
            },
          }
        : {}),
    };
  }
}

/** `work`, or a rejection once `ms` passed without it settling (the adapter is released by the caller). */
function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not connect within ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
