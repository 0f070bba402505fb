/**
 * What the email adapter reads from a message's IMAP body structure and headers, and the threading
 * headers of what it sends. Pure functions: no connection, no I/O.
 *
 * Parts are chosen from the body structure so an attachment larger than the agent's limit is refused by
 * its declared size and never downloaded.
 */
import { randomBytes } from 'node:crypto';
import type { MessageStructureObject } from 'imapflow';

/** A leaf of the body structure the adapter wants: the message text or an attachment. */
export interface PartRef {
  part: string;
  type: string;
  /** Bytes on the wire (transfer-encoded). */
  encodedSize: number;
  encoding: string;
  filename?: string;
}

export interface MessageParts {
  /** The first inline text/plain part, else undefined. */
  plain?: PartRef;
  /** The first inline text/html part (used when there is no plain part). */
  html?: PartRef;
  attachments: PartRef[];
}

function filenameOf(node: MessageStructureObject): string | undefined {
  return node.dispositionParameters?.filename ?? node.parameters?.name ?? undefined;
}

/** Walks the structure: inline text parts become the text, every other leaf (and named text) an attachment. */
export function messageParts(root: MessageStructureObject | undefined): MessageParts {
  const found: MessageParts = { attachments: [] };
  const visit = (node: MessageStructureObject) => {
    if (node.childNodes?.length && node.type.startsWith('multipart/')) {
      for (const child of node.childNodes) visit(child);
      return;
    }
    const type = (node.type || 'text/plain').toLowerCase();
    const filename = filenameOf(node);
    const ref: PartRef = {
      // A single-part message has no part number: its body is part 1.
      part: node.part ?? '1',
      type,
      encodedSize: node.size ?? 0,
      encoding: (node.encoding ?? '7bit').toLowerCase(),
      ...(filename ? { filename } : {}),
    };
    const inline = node.disposition?.toLowerCase() !== 'attachment' && !filename;
    if (inline && type === 'text/plain' && !found.plain) found.plain = ref;
    else if (inline && type === 'text/html' && !found.html) found.html = ref;
    else if (!inline || !type.startsWith('text/') || type === 'text/calendar') found.attachments.push(ref);
  };
  if (root) visit(root);
  return found;
}

/**
 * The decoded size a part will have, from its transfer-encoded size, never above the real one: base64
 * grows by 4/3, plus at most one line break per 78 bytes and two padding characters. So an attachment
 * within the limit is never refused by its announcement (the download is capped either way).
 */
export function decodedSize(ref: PartRef): number {
  if (ref.encoding !== 'base64') return ref.encodedSize;
  const breaks = 2 * Math.ceil(ref.encodedSize / 78);
  return Math.max(0, Math.floor(((ref.encodedSize - breaks) * 3) / 4) - 2);
}

/** A file name safe as one path segment of an agent file: no separators, no dot-only names. */
export function safeFilename(name: string | undefined, fallback: string): string {
  const cleaned = (name ?? '')
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f/\\]+/g, '_')
    .replace(/^\.+/, '')
    .trim()
    .slice(0, 120);
  return cleaned || fallback;
}

const MESSAGE_ID = /<[^<>\s]+>/g;

/** The message ids (`<...>`) in a References or In-Reply-To header value, in order. */
export function messageIds(value: string | undefined | null): string[] {
  return value ? (value.match(MESSAGE_ID) ?? []) : [];
}

/** One header's unfolded value from a raw header block (imapflow's `headers` fetch answers a Buffer). */
export function headerValue(block: Buffer | string | undefined, name: string): string | undefined {
  if (!block) return undefined;
  const text = block.toString('utf8').replace(/\r?\n[ \t]+/g, ' ');
  const wanted = name.toLowerCase();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === wanted) return line.slice(colon + 1).trim();
  }
  return undefined;
}

/** `Re: <subject>` unless it already starts with a reply prefix. */
export function replySubject(subject: string | undefined): string {
  const base = (subject ?? '').trim();
  if (!base) return 'Re: your message';
  return /^re:/i.test(base) ? base : `Re: ${base}`;
}

/** What a reply needs to stay in its thread (stored on the inbox row when the mail came in). */
export interface ThreadInfo {
  /** The Message-ID of the mail replied to. */
  messageId: string;
  /** Its References (oldest first). */
  references: string[];
  subject?: string;
}

/**
 * Reply headers (RFC 5322 section 3.6.4): In-Reply-To the parent's id; References the parent's
 * References (or its In-Reply-To) plus the parent's id, trimmed from the middle to stay short.
 */
export function replyHeaders(parent: ThreadInfo): { inReplyTo: string; references: string[]; subject: string } {
  let references = [...parent.references.filter((id) => id !== parent.messageId), parent.messageId];
  if (references.length > 20) references = [references[0]!, ...references.slice(-19)];
  return { inReplyTo: parent.messageId, references, subject: replySubject(parent.subject) };
}

/** The conversation a message belongs to: the first of its References, else what it replies to, else itself. */
export function threadRoot(messageId: string, references: string[], inReplyTo: string[]): string {
  return references[0] ?? inReplyTo[0] ?? messageId;
}

/**
 * The Message-ID of an outbox row: the same for every try, and after a daemon restart, so a receiver
 * that already has it can drop the duplicate.
 */
export function outboundMessageId(agentId: string, outboxId: number, fromAddress: string, chunk = 0): string {
  const domain = fromAddress.includes('@') ? fromAddress.slice(fromAddress.lastIndexOf('@') + 1) : 'agt.invalid';
  const local = `${agentId}.${outboxId}${chunk > 0 ? `.${chunk}` : ''}`.replace(
    /[^A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]/g,
    '-',
  );
  return `<agt.${local}@${domain.replace(/[^A-Za-z0-9.-]/g, '-') || 'agt.invalid'}>`;
}

/**
 * A Message-ID for a mail that is no outbox row (an owner task, a receipt): random, so a reply's
 * In-Reply-To names this one mail and cannot be guessed.
 */
export function randomMessageId(fromAddress: string): string {
  const domain = fromAddress.includes('@') ? fromAddress.slice(fromAddress.lastIndexOf('@') + 1) : 'agt.invalid';
  return `<agt.${randomBytes(18)
    .toString('base64url')
    .replace(/[^A-Za-z0-9]/g, 'x')}@${domain.replace(/[^A-Za-z0-9.-]/g, '-') || 'agt.invalid'}>`;
}
