/**
 * The email adapter's outbound side: nodemailer over SMTP. A reply carries In-Reply-To and References
 * (so mail clients thread it) and `Re:` on the parent's subject; every message carries a Message-ID
 * derived from the agent and its outbox row (a retried or resumed send is the same message to the
 * receiver) and `Auto-Submitted` (`auto-replied` or `auto-generated`, RFC 3834: other robots do not
 * answer it, so two of them cannot loop).
 */
import type { Transporter } from 'nodemailer';
import type { EmailSettings } from './email-config.js';
import { outboundMessageId, replyHeaders, type ThreadInfo } from './email-mime.js';

export interface OutgoingMail {
  agentId: string;
  outboxId: number;
  /** The chunk of the outbox row (0 unless its text was cut). */
  chunk?: number;
  to: string;
  text: string;
  /** The mail this answers, when it is a reply. */
  parent?: ThreadInfo;
  /** Used when it is not a reply. */
  subject?: string;
  /** A Message-ID of its own instead of the one derived from the outbox row (a mail that is no outbox row). */
  messageId?: string;
}

/** A failed send: `retryable` for a 4xx answer or a network failure, not for a 5xx or a refused login. */
export class SmtpSendError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly responseCode?: number,
  ) {
    super(message);
    this.name = 'SmtpSendError';
  }
}

const NETWORK_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNRESET', 'ECONNREFUSED']);

/** What an SMTP failure means for another try; the message never quotes credentials (nodemailer's do not). */
export function classifySmtpError(error: unknown, password: string): SmtpSendError {
  const e = error as { message?: string; code?: string; responseCode?: number };
  let message = String(e?.message ?? error).slice(0, 400);
  if (password.length >= 4) message = message.split(password).join('[redacted]');
  const code = typeof e?.responseCode === 'number' ? e.responseCode : undefined;
  if (e?.code === 'EAUTH') return new SmtpSendError(`the SMTP server refused the login: ${message}`, false, code);
  if (code !== undefined)
    return new SmtpSendError(`the SMTP server answered ${code}: ${message}`, code >= 400 && code < 500, code);
  return new SmtpSendError(
    `sending mail failed: ${message}`,
    NETWORK_CODES.has(e?.code ?? '') || e?.code === undefined,
  );
}

export class SmtpOutbox {
  private transport: Transporter | undefined;

  constructor(
    private readonly settings: EmailSettings,
    private readonly password: string,
  ) {}

  private async transporter(): Promise<Transporter> {
    if (this.transport) return this.transport;
    const nodemailer = (await import('nodemailer')).default;
    const { smtp } = this.settings;
    this.transport = nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.security === 'tls',
      requireTLS: smtp.security === 'starttls',
      ignoreTLS: smtp.security === 'none',
      auth: { user: smtp.user, pass: this.password },
      connectionTimeout: 30_000,
      greetingTimeout: 15_000,
      socketTimeout: 60_000,
      disableFileAccess: true,
      disableUrlAccess: true,
    });
    return this.transport;
  }

  /** Sends one mail; resolves to its Message-ID, rejects with a {@link SmtpSendError}. */
  async send(mail: OutgoingMail): Promise<string> {
    const transport = await this.transporter();
    const messageId =
      mail.messageId ?? outboundMessageId(mail.agentId, mail.outboxId, this.settings.address, mail.chunk ?? 0);
    const thread = mail.parent ? replyHeaders(mail.parent) : undefined;
    try {
      await transport.sendMail({
        from: this.settings.name ? { name: this.settings.name, address: this.settings.address } : this.settings.address,
        to: mail.to,
        subject: thread?.subject ?? mail.subject ?? firstLine(mail.text),
        text: mail.text,
        messageId,
        ...(thread ? { inReplyTo: thread.inReplyTo, references: thread.references } : {}),
        headers: { 'Auto-Submitted': thread ? 'auto-replied' : 'auto-generated' },
      });
    } catch (error) {
      throw classifySmtpError(error, this.password);
    }
    return messageId;
  }

  close(): void {
    this.transport?.close();
    this.transport = undefined;
  }
}

/** A subject for a new (not reply) mail: the text's first line, shortened. */
function firstLine(text: string): string {
  const line = text.trim().split(/\r?\n/, 1)[0] ?? '';
  return line.length > 78 ? `${line.slice(0, 75)}…` : line || 'Message';
}
