/**
 * The email adapter type: an agent's mailbox over IMAP (imapflow: IDLE, plus a poll) for what comes in
 * and SMTP (nodemailer) for what goes out. Config `adapters.email.config` holds the address and the
 * servers (see email-config.ts); the passwords are the agent's sealed credentials
 * `adapter:email:IMAP_PASSWORD` and `adapter:email:SMTP_PASSWORD` (defaults to the IMAP one).
 *
 * Ids: `chatId` and the sender id are the sender's address (lowercase), so `allow_from` lists addresses
 * and `msg_send` to `email:<address>` writes a new mail; `messageId` is the mail's Message-ID,
 * `replyToId` its In-Reply-To, `threadId` the first of its References. A reply (by `parent_id`) carries
 * In-Reply-To and References and `Re:` on the parent's subject, read back from the mailbox.
 *
 * The servers come from the agent's config, which may be hostile, and the passwords go to them: so the
 * owner lists the hosts agents may use, `types.email.allowHosts` in the channels extension's manifest
 * config. A host not listed (any host, while the list is empty) is a permanent connect error, and the
 * password is never read for it.
 */
import {
  AdapterConnectError,
  AdapterSendError,
  type AdapterHost,
  type AdapterInbound,
  type AdapterOutbound,
  type AdapterType,
  type ChannelAdapter,
  type TaskPost,
  type TaskPrompt,
} from '../adapter.js';
import { randomMessageId } from './email-mime.js';
import { EmailConfigSchema, emailSettings, type EmailSettings } from './email-config.js';
import { ImapInbox, type InboundMail } from './email-imap.js';
import { SmtpOutbox } from './email-smtp.js';

/** Email has no practical length limit: one outbox row is one mail (msg_send texts are at most 100,000 characters). */
const MAX_TEXT = 100_000;

function allowedHosts(options: Readonly<Record<string, unknown>>): Set<string> {
  const list = options.allowHosts;
  if (!Array.isArray(list)) return new Set();
  return new Set(list.filter((host): host is string => typeof host === 'string').map((host) => host.toLowerCase()));
}

function inboundOf(mail: InboundMail): AdapterInbound {
  const subject = mail.subject.trim();
  return {
    messageId: mail.messageId,
    chatId: mail.from.address,
    chatKind: 'dm',
    sender: { id: mail.from.address, ...(mail.from.name ? { name: mail.from.name } : {}) },
    mentioned: true,
    ...(mail.threadId !== mail.messageId ? { threadId: mail.threadId } : {}),
    ...(mail.inReplyTo[0] ? { replyToId: mail.inReplyTo[0] } : {}),
    // The subject is often the whole request: the agent sees it with the body.
    text: subject ? `Subject: ${subject}\n\n${mail.text.trim()}` : mail.text.trim(),
    attachments: mail.attachments.map((attachment) => ({
      name: attachment.filename,
      mimeType: attachment.mimeType,
      size: attachment.size,
      fetch: (maxBytes: number) => attachment.fetch(maxBytes),
    })),
    extra: { subject: mail.subject, ...(mail.date ? { date: mail.date } : {}) },
  };
}

class EmailAdapter implements ChannelAdapter {
  private inbox: ImapInbox | undefined;
  private outbox: { transport: SmtpOutbox; password: string } | undefined;
  private settings: EmailSettings | undefined;

  constructor(private readonly host: AdapterHost) {}

  async connect(): Promise<void> {
    let settings: EmailSettings;
    try {
      settings = emailSettings(this.host.config);
    } catch (error) {
      throw new AdapterConnectError((error as Error).message);
    }
    const allowed = allowedHosts(this.host.options);
    for (const server of [settings.imap, settings.smtp]) {
      if (!allowed.has(server.host.toLowerCase())) {
        throw new AdapterConnectError(
          `mail server ${server.host} is not in the owner's list (channels config types.email.allowHosts)`,
        );
      }
    }
    this.settings = settings;
    const imapPassword = await this.host.credential('IMAP_PASSWORD');
    const inbox = new ImapInbox({
      settings,
      password: imapPassword,
      logger: this.host.logger,
      ...(typeof this.host.options.idleDelayMs === 'number' ? { idleDelayMs: this.host.options.idleDelayMs } : {}),
      onMail: (mail) => this.received(mail),
      onClose: (reason) => {
        // A drop during connect is that connect's failure (it rejects), not a loss.
        if (this.inbox === inbox && opened) this.host.lost(reason);
      },
    });
    this.inbox = inbox;
    let opened = false;
    try {
      await inbox.open();
      opened = true;
    } catch (error) {
      const e = error as { authenticationFailed?: boolean; responseText?: string; message?: string; code?: string };
      if (e?.authenticationFailed)
        throw new AdapterConnectError(
          `the IMAP server refused the login${e.responseText ? `: ${e.responseText}` : ''}`,
        );
      throw new Error(
        `IMAP ${settings.imap.host}:${settings.imap.port}: ${String(e?.responseText ?? e?.message ?? error).slice(0, 300)}`,
      );
    }
  }

  private async received(mail: InboundMail): Promise<void> {
    const own = this.settings?.address.toLowerCase();
    // Robots' mail (RFC 3834) and our own copies are never handed to the agent: answering them can loop.
    if (mail.automated || mail.from.address === own || mail.from.address === '') {
      this.host.logger.debug(
        { uid: mail.uid, automated: mail.automated },
        'email: mail skipped (automated, own or without sender)',
      );
      return;
    }
    await this.host.receive(inboundOf(mail));
  }

  async disconnect(): Promise<void> {
    const inbox = this.inbox;
    this.inbox = undefined;
    this.outbox?.transport.close();
    this.outbox = undefined;
    await inbox?.close().catch(() => {});
  }

  /**
   * The SMTP sender, with the password read at each send: a credential set or replaced while connected
   * is used by the next mail. SMTP_PASSWORD falls back to IMAP_PASSWORD (one account for both).
   */
  private async smtp(settings: EmailSettings): Promise<SmtpOutbox> {
    let password: string;
    try {
      password = await this.host.credential('SMTP_PASSWORD').catch(() => this.host.credential('IMAP_PASSWORD'));
    } catch (error) {
      throw new AdapterSendError((error as Error).message);
    }
    if (this.outbox?.password !== password) {
      this.outbox?.transport.close();
      this.outbox = { transport: new SmtpOutbox(settings, password), password };
    }
    return this.outbox.transport;
  }

  async postTask(owner: string, prompt: TaskPrompt): Promise<TaskPost> {
    const settings = this.settings;
    if (!settings || !this.inbox) throw new Error('the email adapter is not connected');
    const outbox = await this.smtp(settings);
    const mail = taskMail(prompt);
    const messageId = await outbox.send({
      agentId: this.host.agentId,
      outboxId: 0,
      to: owner,
      ...mail,
      messageId: randomMessageId(settings.address),
    });
    return { chatId: owner.toLowerCase(), messageId, uniqueId: true };
  }

  async send(message: AdapterOutbound): Promise<{ messageId: string }> {
    const settings = this.settings;
    if (!settings || !this.inbox) throw new AdapterSendError('the email adapter is not connected');
    if (!/^[^\s@<>,;]+@[^\s@<>,;]+$/.test(message.chatId)) {
      throw new AdapterSendError(`"${message.chatId.slice(0, 100)}" is not one mail address`, { permanent: true });
    }
    let parent: { messageId: string; references: string[]; subject?: string } | undefined;
    if (message.replyToId) {
      const found = await this.inbox?.lookup(message.replyToId).catch(() => undefined);
      const references = found?.references.length ? found.references : message.threadId ? [message.threadId] : [];
      parent = { messageId: message.replyToId, references, ...(found ? { subject: found.subject } : {}) };
    }
    const outbox = await this.smtp(settings);
    try {
      const messageId = await outbox.send({
        agentId: this.host.agentId,
        outboxId: message.outboxId,
        chunk: message.chunk,
        to: message.chatId,
        text: message.text,
        ...(parent ? { parent } : {}),
        // Not an outbox row (the core's receipt): no row to derive a stable id from.
        ...(message.outboxId === 0 ? { messageId: randomMessageId(settings.address) } : {}),
      });
      return { messageId };
    } catch (error) {
      const e = error as { message: string; retryable?: boolean; responseCode?: number };
      throw new AdapterSendError(e.message, {
        permanent: e.retryable === false,
        ...(e.responseCode ? { statusCode: e.responseCode } : {}),
      });
    }
  }
}

/**
 * An owner task by mail: no buttons, so the choices are words to reply with. The reply is matched by its
 * In-Reply-To (this mail's random Message-ID) and taken only from the owner's address; the core does that.
 */
function taskMail(prompt: TaskPrompt): { subject: string; text: string } {
  const words = prompt.choices.map((choice) => `  ${choiceWord(prompt, choice.id)}: ${choice.label}`);
  const how =
    prompt.kind === 'ask'
      ? words.length > 0
        ? ['Reply with your answer, for example one of:', ...prompt.choices.map((choice) => `  ${choice.label}`)]
        : ['Reply with your answer.']
      : ['Reply with one word:', ...words];
  const first = prompt.text.split('\n', 1)[0] ?? '';
  return {
    subject: `[agt] ${first.length > 70 ? `${first.slice(0, 69)}…` : first}`,
    text: `${prompt.text}\n\n${how.join('\n')}\n`,
  };
}

/** The word of a reply that picks a choice (task-prompts.ts reads the same words). */
function choiceWord(prompt: TaskPrompt, id: string): string {
  const words: Record<string, string> = { ok: 'approve', always: 'always', no: 'deny', resume: 'resume', stay: 'stay' };
  if (prompt.kind === 'budget' && id === 'ok') return 'allow';
  if (prompt.kind === 'budget' && id === 'raise') return 'a number';
  return words[id] ?? id;
}

export const emailAdapterType: AdapterType = {
  type: 'email',
  credentials: ['IMAP_PASSWORD', 'SMTP_PASSWORD'],
  configSchema: EmailConfigSchema,
  limits: { maxTextLength: MAX_TEXT },
  create: (host) => new EmailAdapter(host),
};
