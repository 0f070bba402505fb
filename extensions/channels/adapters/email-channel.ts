/**
 * One agent's mail account, kept connected: the IMAP inbox (reopened with exponential backoff and jitter
 * whenever it fails or drops) and the SMTP sender. Passwords are read from the agent's sealed
 * credentials at each (re)connect, so a credential set later is used by the next try; a missing or
 * locked credential is status `error` naming it, never a crash.
 */
import type { Logger } from '@agt/contracts/logger';
import { EMAIL_CREDENTIALS, type EmailSettings } from './email-config.js';
import { ImapInbox, type InboundMail } from './email-imap.js';
import { SmtpOutbox, SmtpSendError, type OutgoingMail } from './email-smtp.js';

export type ChannelStatus = 'connected' | 'connecting' | 'disconnected' | 'error';

export interface Backoff {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { baseMs: 1000, maxMs: 5 * 60_000 };

export interface EmailChannelOptions {
  settings: EmailSettings;
  readCredential(name: string): Promise<string | undefined>;
  maxAttachmentSize: number;
  /** Resolves once the mail is committed to the agent's inbox (or deliberately dropped). */
  onMail(mail: InboundMail): Promise<void>;
  /** Every status change, with the reason of an `error` or a drop. */
  onStatus(status: ChannelStatus, reason?: string): void;
  logger: Logger;
  backoff?: Backoff;
  idleDelayMs?: number;
}

const missingCredential = (name: string) =>
  `the agent credential ${name} is not set, or the agent's credentials are locked (set it with PUT /agents/{id}/credentials)`;

function describeImapFailure(error: unknown): string {
  const e = error as { authenticationFailed?: boolean; responseText?: string; code?: string; message?: string };
  if (e?.authenticationFailed) return `the IMAP server refused the login${e.responseText ? `: ${e.responseText}` : ''}`;
  return `IMAP: ${String(e?.responseText ?? e?.message ?? error).slice(0, 300)}${e?.code ? ` (${e.code})` : ''}`;
}

export class EmailChannel {
  private inbox: ImapInbox | undefined;
  private outbox: SmtpOutbox | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private failures = 0;
  /** Bumped at each start/stop, so a connect that finishes late knows it is stale. */
  private generation = 0;
  private current: ChannelStatus = 'disconnected';

  constructor(private readonly options: EmailChannelOptions) {}

  get status(): ChannelStatus {
    return this.current;
  }

  /** Starts connecting (in the background); status goes `connecting`, then `connected` or `error`. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.failures = 0;
    this.generation++;
    void this.connect(this.generation);
  }

  /** Closes the connection and cancels any pending reconnect; idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.generation++;
    clearTimeout(this.timer);
    this.timer = undefined;
    const inbox = this.inbox;
    this.inbox = undefined;
    this.outbox?.close();
    this.outbox = undefined;
    await inbox?.close();
    this.setStatus('disconnected');
  }

  /** Sends one mail through SMTP; rejects with an `SmtpSendError` (its `retryable` says whether to try again). */
  async send(mail: OutgoingMail): Promise<string> {
    if (!this.outbox) {
      const password =
        (await this.options.readCredential(EMAIL_CREDENTIALS.smtpPassword)) ?? (await this.options.readCredential(EMAIL_CREDENTIALS.imapPassword));
      if (!password) throw new SmtpSendError(missingCredential(EMAIL_CREDENTIALS.smtpPassword), false);
      this.outbox = new SmtpOutbox(this.options.settings, password);
    }
    return this.outbox.send(mail);
  }

  private setStatus(status: ChannelStatus, reason?: string): void {
    if (status === this.current && status !== 'error') return;
    this.current = status;
    this.options.onStatus(status, reason);
  }

  private async connect(generation: number): Promise<void> {
    this.setStatus('connecting');
    // A reconnect reads the passwords again: the SMTP side too, at its next send.
    this.outbox?.close();
    this.outbox = undefined;
    const password = await this.options.readCredential(EMAIL_CREDENTIALS.imapPassword).catch(() => undefined);
    if (generation !== this.generation) return;
    if (!password) {
      // Nothing to retry with: the owner sets the credential, and a restart or a config change reconciles.
      this.setStatus('error', missingCredential(EMAIL_CREDENTIALS.imapPassword));
      return;
    }
    const inbox = new ImapInbox({
      settings: this.options.settings,
      password,
      maxAttachmentSize: this.options.maxAttachmentSize,
      onMail: this.options.onMail,
      logger: this.options.logger,
      ...(this.options.idleDelayMs !== undefined ? { idleDelayMs: this.options.idleDelayMs } : {}),
      onClose: (reason) => {
        if (generation !== this.generation || this.inbox !== inbox) return;
        this.inbox = undefined;
        this.retry(generation, reason);
      },
    });
    this.inbox = inbox;
    try {
      await inbox.open();
    } catch (error) {
      await inbox.close().catch(() => {});
      if (generation !== this.generation) return;
      if (this.inbox === inbox) this.inbox = undefined;
      this.retry(generation, describeImapFailure(error));
      return;
    }
    if (generation !== this.generation) {
      await inbox.close();
      return;
    }
    this.failures = 0;
    this.setStatus('connected');
  }

  /** Status `error` with the reason, and another connect after the backoff (doubling, with jitter). */
  private retry(generation: number, reason: string): void {
    if (this.stopped || generation !== this.generation) return;
    const { baseMs, maxMs } = this.options.backoff ?? DEFAULT_BACKOFF;
    const delay = Math.min(maxMs, baseMs * 2 ** Math.min(this.failures, 20)) * (0.75 + Math.random() * 0.5);
    this.failures++;
    this.options.logger.warn({ reason, retryInMs: Math.round(delay) }, 'email: IMAP connection lost or refused; reconnecting');
    this.setStatus('error', reason);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (generation === this.generation && !this.stopped) void this.connect(generation);
    }, delay);
  }
}
