/**
 * The email adapter's inbound side: one IMAP connection (imapflow) to the agent's mailbox. New mail is
 * noticed by IMAP IDLE (the server's EXISTS) and, besides, by a poll every `poll_interval_ms` (servers
 * without IDLE, a missed notification). Each unseen message is read part by part from its body
 * structure, handed to `onMail`, and flagged `\Seen` once the agent has it, so a restart does not hand it
 * over again (and the inbox's external id drops a replay if flagging failed).
 *
 * This class never reconnects by itself: when the connection ends it calls `onClose`, and its owner
 * decides when to open a new one (with backoff).
 */
import type { ImapFlow, MessageStructureObject } from 'imapflow';
import type { Readable } from 'node:stream';
import type { Logger } from '@agt/contracts';
import type { EmailSettings } from './email-config.js';
import {
  decodedSize,
  headerValue,
  messageIds,
  messageParts,
  safeFilename,
  threadRoot,
  type PartRef,
} from './email-mime.js';

/**
 * Mails taken per pass, oldest first: a mailbox with thousands unseen is worked through in batches
 * (the mailbox lock is released in between, so a reply's lookup is not held up behind all of them).
 */
export const BATCH = 25;

/** The most text taken from one mail; the rest is cut with a note. */
export const MAX_TEXT_BYTES = 256 * 1024;

export interface InboundAttachment {
  filename: string;
  mimeType: string;
  /** Decoded bytes as the body structure announces them (an estimate for base64). */
  size: number;
  /** Downloads it; rejects once more than `maxBytes` arrive. Valid while `onMail` runs. */
  fetch(maxBytes: number): Promise<Buffer>;
}

export interface InboundMail {
  uid: number;
  messageId: string;
  inReplyTo: string[];
  references: string[];
  /** The conversation's first message id. */
  threadId: string;
  from: { address: string; name?: string };
  subject: string;
  /** Epoch ms of the Date header, when there is one. */
  date?: number;
  text: string;
  attachments: InboundAttachment[];
  /** Auto-Submitted other than `no` (RFC 3834: a robot's mail, which must not be answered automatically). */
  automated: boolean;
}

export interface ImapInboxOptions {
  settings: EmailSettings;
  password: string;
  /** Resolves once the mail is committed to the agent's inbox; a rejection leaves it unseen for the next try. */
  onMail(mail: InboundMail): Promise<void>;
  /** The connection ended without `close()` being called. */
  onClose(reason: string): void;
  logger: Logger;
  /** How long imapflow waits after the last command before it enters IDLE (its default is 15 s). */
  idleDelayMs?: number;
}

const HEADERS = ['message-id', 'in-reply-to', 'references', 'auto-submitted'];

async function readAll(stream: Readable, limit: number): Promise<{ data: Buffer; cut: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let cut = false;
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    if (size + buffer.length > limit) {
      chunks.push(buffer.subarray(0, limit - size));
      cut = true;
      stream.destroy();
      break;
    }
    chunks.push(buffer);
    size += buffer.length;
  }
  return { data: Buffer.concat(chunks), cut };
}

async function htmlToText(html: string): Promise<string> {
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(Buffer.from(`Content-Type: text/html; charset=utf-8\r\n\r\n${html}`));
  return parsed.text ?? '';
}

export class ImapInbox {
  private client: ImapFlow | undefined;
  private closing = false;
  private poll: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private again = false;

  constructor(private readonly options: ImapInboxOptions) {}

  /** Connects, logs in and selects the mailbox (rejects when any of it fails), then takes what is unseen. */
  async open(): Promise<void> {
    const { ImapFlow } = await import('imapflow');
    const { imap, idle } = this.options.settings;
    const client = new ImapFlow({
      host: imap.host,
      port: imap.port,
      secure: imap.security === 'tls',
      doSTARTTLS: imap.security === 'starttls' ? true : imap.security === 'none' ? false : undefined,
      auth: { user: imap.user, pass: this.options.password },
      logger: false,
      disableAutoIdle: !idle,
      autoIdleDelay: this.options.idleDelayMs ?? 1000,
      connectionTimeout: 30_000,
      greetingTimeout: 15_000,
      socketTimeout: 5 * 60_000,
    });
    this.client = client;
    // imapflow emits 'error' for socket failures; without a listener it would crash the daemon.
    client.on('error', (error: Error) => this.options.logger.debug({ err: error.message }, 'imap connection error'));
    client.on('close', () => {
      if (this.client !== client) return;
      this.stopPolling();
      if (!this.closing) this.options.onClose('the IMAP connection closed');
    });
    client.on('exists', () => void this.sync());
    await client.connect();
    await client.mailboxOpen(imap.mailbox);
    this.poll = setInterval(() => void this.sync(), this.options.settings.pollIntervalMs);
    // What is already waiting is taken in the background: a full mailbox does not hold up the connect.
    void this.sync();
  }

  /** Logs out (or drops the socket when that does not answer quickly); idempotent. */
  async close(): Promise<void> {
    this.closing = true;
    this.stopPolling();
    const client = this.client;
    if (!client) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client.logout().catch(() => {}),
        new Promise((resolve) => (timer = setTimeout(resolve, 2000))),
      ]);
    } finally {
      clearTimeout(timer);
      client.close();
    }
  }

  private stopPolling(): void {
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
  }

  /** One sync at a time; a notice during a sync makes it run once more. */
  sync(): Promise<void> {
    if (this.syncing) {
      this.again = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      do {
        this.again = false;
        await this.syncOnce();
      } while (this.again && !this.closing);
    })()
      .catch((error: Error) => this.options.logger.warn({ err: error.message }, 'email: reading the mailbox failed'))
      .finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  private async syncOnce(): Promise<void> {
    const client = this.client;
    if (!client || this.closing || !client.usable) return;
    const lock = await client.getMailboxLock(this.options.settings.imap.mailbox);
    try {
      const found = await client.search({ seen: false }, { uid: true });
      const unseen = (found || []).sort((a, b) => a - b);
      let taken = 0;
      for (const uid of unseen.slice(0, BATCH)) {
        if (this.closing || !client.usable) return;
        // One unreadable or refused mail does not hold up the others; it stays unseen for the next pass.
        try {
          const mail = await this.read(client, uid);
          if (!mail) continue;
          await this.options.onMail(mail);
        } catch (error) {
          this.options.logger.warn(
            { err: (error as Error).message, uid },
            'email: a message was not taken; it stays unseen',
          );
          continue;
        }
        await client.messageFlagsAdd(String(uid), ['\\Seen'], { uid: true });
        taken++;
      }
      // More are waiting: another pass at once, unless this one took none (then the poll tries again).
      if (unseen.length > BATCH && taken > 0) this.again = true;
    } finally {
      lock.release();
    }
  }

  private async read(client: ImapFlow, uid: number): Promise<InboundMail | undefined> {
    const message = await client.fetchOne(
      String(uid),
      { envelope: true, bodyStructure: true, headers: HEADERS },
      { uid: true },
    );
    if (!message) return undefined;
    const envelope = message.envelope;
    const headers = message.headers;
    // imapflow's `mailbox` is `false` when none is open: the validity part of the fallback id says so.
    const validity = client.mailbox === false ? 'false' : String(client.mailbox?.uidValidity);
    const messageId =
      messageIds(headerValue(headers, 'message-id') ?? envelope?.messageId)[0] ??
      `<uid-${uid}.${validity}@${this.options.settings.imap.host}>`;
    const inReplyTo = messageIds(headerValue(headers, 'in-reply-to') ?? envelope?.inReplyTo);
    const references = messageIds(headerValue(headers, 'references'));
    const auto = (headerValue(headers, 'auto-submitted') ?? 'no').toLowerCase();
    const sender = envelope?.from?.[0] ?? envelope?.sender?.[0];
    const parts = messageParts(message.bodyStructure as MessageStructureObject | undefined);
    return {
      uid,
      messageId,
      inReplyTo,
      references,
      threadId: threadRoot(messageId, references, inReplyTo),
      from: { address: (sender?.address ?? '').toLowerCase(), ...(sender?.name ? { name: sender.name } : {}) },
      subject: envelope?.subject ?? '',
      ...(envelope?.date ? { date: new Date(envelope.date).getTime() } : {}),
      text: await this.text(client, uid, parts.plain, parts.html),
      attachments: this.attachments(client, uid, parts.attachments),
      automated: auto !== 'no',
    };
  }

  private async text(
    client: ImapFlow,
    uid: number,
    plain: PartRef | undefined,
    html: PartRef | undefined,
  ): Promise<string> {
    const part = plain ?? html;
    if (!part) return '';
    const download = await client.download(String(uid), part.part, { uid: true, maxBytes: MAX_TEXT_BYTES * 4 });
    if (!download.content) return '';
    const { data, cut } = await readAll(download.content, MAX_TEXT_BYTES);
    let text = data.toString('utf8');
    if (part === html) text = await htmlToText(text);
    return cut ? `${text}\n[the rest of this mail was cut: longer than ${MAX_TEXT_BYTES} bytes]` : text;
  }

  private attachments(client: ImapFlow, uid: number, refs: PartRef[]): InboundAttachment[] {
    return refs.map((ref) => ({
      filename: safeFilename(ref.filename, `attachment-${ref.part}`),
      mimeType: ref.type,
      size: decodedSize(ref),
      fetch: async (maxBytes: number) => {
        const download = await client.download(String(uid), ref.part, {
          uid: true,
          decodeText: false,
          maxBytes: maxBytes + 1,
        });
        if (!download.content) throw new Error(`part ${ref.part} of the mail is gone`);
        const { data, cut } = await readAll(download.content, maxBytes + 1);
        if (cut || data.length > maxBytes) throw new Error(`exceeds the limit of ${maxBytes} bytes`);
        return data;
      },
    }));
  }

  /**
   * The subject and References of a mail in the mailbox, by its Message-ID (what a reply to it needs to
   * stay in its thread); undefined when it is not there (moved, deleted) or the connection is down.
   */
  async lookup(messageId: string): Promise<{ subject: string; references: string[] } | undefined> {
    const client = this.client;
    if (!client || this.closing || !client.usable || !/^<[^<>\s]+>$/.test(messageId)) return undefined;
    const lock = await client.getMailboxLock(this.options.settings.imap.mailbox);
    try {
      const found = await client.search({ header: { 'message-id': messageId } }, { uid: true });
      const uid = (found || []).at(-1);
      if (uid === undefined) return undefined;
      const message = await client.fetchOne(
        String(uid),
        { envelope: true, headers: ['references', 'in-reply-to'] },
        { uid: true },
      );
      if (!message) return undefined;
      const references = messageIds(headerValue(message.headers, 'references'));
      return {
        subject: message.envelope?.subject ?? '',
        references: references.length > 0 ? references : messageIds(headerValue(message.headers, 'in-reply-to')),
      };
    } finally {
      lock.release();
    }
  }
}
