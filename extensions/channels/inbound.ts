/**
 * From a platform message to the agent's inbox: the policy first (a refused message leaves a log row,
 * no inbox row, no turn), then attachments (each up to the size limit stored as an agent file under
 * `inbox/<type>/`, larger or unreadable ones named in a note the agent reads), then the `agt_inbox` row
 * and `on_inbox`.
 */
import type { AgentsService, InboundMessage } from '@agt/contracts';
import type { Deliver } from '@agt/contracts';
import type { AdapterInbound, InboundAttachment } from './adapter.js';
import type { AdapterInstance } from './instance.js';
import { policyOf, refusal, type PolicyConfig } from './policy.js';

export interface StoredAttachment {
  name: string;
  path: string;
  size: number;
  mime_type: string | null;
}

export interface RefusedAttachment {
  name: string;
  size: number | null;
  reason: string;
}

const MB = 1024 * 1024;
/** The most of a message's text kept in the inbox row (what `msg_send` accepts too). */
const MAX_TEXT = 100_000;
const human = (bytes: number) =>
  bytes >= MB ? `${(bytes / MB).toFixed(1)} MB` : bytes >= 1024 ? `${Math.ceil(bytes / 1024)} KB` : `${bytes} bytes`;

/** A file name that is one safe path segment: platform names may hold slashes, dots, anything. */
export function safeSegment(name: string, fallback: string): string {
  const cleaned = name
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, 100);
  return cleaned === '' ? fallback : cleaned;
}

async function storeAttachments(
  agents: AgentsService,
  instance: AdapterInstance,
  message: AdapterInbound,
): Promise<{ stored: StoredAttachment[]; refused: RefusedAttachment[] }> {
  const platformCap = instance.kind.limits.maxAttachmentSize;
  const limit = Math.min(instance.settings.maxAttachmentSize, platformCap ?? Number.POSITIVE_INFINITY);
  const stored: StoredAttachment[] = [];
  const refused: RefusedAttachment[] = [];
  const prefix = safeSegment(message.messageId, 'message');
  for (const [index, attachment] of message.attachments.entries()) {
    const name = safeSegment(attachment.name, `attachment-${index + 1}`);
    if (attachment.size !== null && attachment.size > limit) {
      refused.push({
        name: attachment.name,
        size: attachment.size,
        reason: `larger than the ${human(limit)} limit (${human(attachment.size)})`,
      });
      continue;
    }
    const content = await download(attachment, limit);
    if (typeof content === 'string') {
      refused.push({ name: attachment.name, size: attachment.size, reason: content });
      continue;
    }
    const path = `inbox/${instance.type}/${prefix}-${index + 1}-${name}`;
    try {
      await agents.files.write(instance.agentId, path, content, attachment.mimeType);
    } catch (error) {
      refused.push({
        name: attachment.name,
        size: content.byteLength,
        reason: `could not be stored: ${error instanceof Error ? error.message.slice(0, 200) : 'unknown error'}`,
      });
      continue;
    }
    stored.push({ name: attachment.name, path, size: content.byteLength, mime_type: attachment.mimeType });
  }
  return { stored, refused };
}

/** The bytes, or why there are none. */
async function download(attachment: InboundAttachment, limit: number): Promise<Uint8Array | string> {
  try {
    const content = await attachment.fetch(limit);
    if (content.byteLength > limit) return `larger than the ${human(limit)} limit`;
    return content;
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    return /limit|too large|exceed/i.test(text)
      ? `larger than the ${human(limit)} limit`
      : `could not be downloaded: ${text.slice(0, 200)}`;
  }
}

/** A sender's file name on one line of the note (it is the sender's text, but must not pose as our note). */
const oneLine = (name: string) => name.replace(/[\u0000-\u001f\u007f"[\]]+/g, ' ').slice(0, 200);

function notes(stored: StoredAttachment[], refused: RefusedAttachment[]): string {
  const lines = [
    ...stored.map((file) => `[attachment "${oneLine(file.name)}" (${human(file.size)}) stored as ${file.path}]`),
    ...refused.map((file) => `[attachment "${oneLine(file.name)}" refused: ${file.reason}; it was not stored]`),
  ];
  return lines.join('\n');
}

/** Applies the policy, stores attachments and delivers; resolves without a row when the policy refuses. */
export async function receiveInbound(
  agents: AgentsService,
  deliver: Deliver,
  instance: AdapterInstance,
  message: AdapterInbound,
): Promise<{ messageId: number } | { refused: string }> {
  const why = refusal(policyOf(instance.settings.policy as PolicyConfig | undefined), message);
  const type = instance.type;
  if (why !== null) {
    agents.log(instance.agentId, 'info', `${type} message from ${type}:${message.sender.id} refused: ${why}`, {
      adapter: type,
      sender: `${type}:${message.sender.id}`,
      chat: `${type}:${message.chatId}`,
      chat_kind: message.chatKind,
    });
    return { refused: why };
  }
  const { stored, refused } = await storeAttachments(agents, instance, message);
  const note = notes(stored, refused);
  const body =
    message.text.length > MAX_TEXT
      ? `${message.text.slice(0, MAX_TEXT)}\n[message cut at ${MAX_TEXT} characters]`
      : message.text;
  const text = [body, note].filter((part) => part !== '').join('\n\n');
  const data = {
    from: `${type}:${message.sender.id}`,
    ...(message.sender.name ? { sender_name: message.sender.name } : {}),
    chat: `${type}:${message.chatId}`,
    reply_to: `${type}:${message.chatId}`,
    chat_kind: message.chatKind,
    message_id: message.messageId,
    ...(message.threadId ? { thread_id: message.threadId } : {}),
    ...(message.replyToId ? { reply_to_id: message.replyToId } : {}),
    mentioned: message.mentioned,
    attachments: stored,
    refused_attachments: refused,
    ...(message.extra ? { platform: message.extra } : {}),
  };
  const inbound: InboundMessage & { externalId?: string } = {
    source: `channel:${type}`,
    sender: `${type}:${message.sender.id}`,
    text: text === '' ? '(empty message)' : text,
    data,
    externalId: `${message.chatId}:${message.messageId}`.slice(0, 200),
  };
  return deliver(inbound);
}
