/**
 * The content type an agent's stored file is handed on with, where the agent must not choose an active
 * one. An agent sets a stored file's type itself (`fs_write`'s `mime`), so a type it gave is kept only
 * from a short list of passive types; anything else (HTML, script, SVG, XML, an MCP app's page) and a
 * file with no type are judged by their bytes: text is `text/plain; charset=utf-8`, the rest
 * `application/octet-stream`. A server sending it over HTTP also sends `X-Content-Type-Options: nosniff`,
 * so no browser guesses an active type from the bytes either.
 */

/** @beta */
export const PLAIN_TEXT_TYPE = 'text/plain; charset=utf-8';

/** Passive types whose bytes are text: sent with `charset=utf-8` when they are. */
const PASSIVE_TEXT = new Set(['text/plain', 'text/markdown', 'text/csv', 'application/json']);
/** Passive binary types: images a browser shows but never runs, PDF, sound and video. */
const PASSIVE_BINARY = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'application/pdf',
  'audio/mpeg',
  'audio/wav',
  'audio/ogg',
  'video/mp4',
  'video/webm',
]);

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Text by its bytes: valid UTF-8 with no NUL (a NUL is what binary formats are full of and text never
 * holds). The empty file is text.
 *
 * @beta
 */
export function isUtf8Text(content: Uint8Array): boolean {
  if (content.includes(0)) return false;
  try {
    utf8.decode(content);
    return true;
  } catch {
    return false;
  }
}

/**
 * The stored type without parameters when it is one of the passive types, else undefined (for a listing
 * that has no bytes to judge).
 *
 * @beta
 */
export function passiveStoredType(stored: string | null | undefined): string | undefined {
  const type = stored?.split(';')[0]?.trim().toLowerCase();
  return type !== undefined && (PASSIVE_TEXT.has(type) || PASSIVE_BINARY.has(type)) ? type : undefined;
}

/**
 * The type to send a stored file with: the stored type when it is a passive one the bytes agree with
 * (a text type only for UTF-8 text), else {@link PLAIN_TEXT_TYPE} for text and `application/octet-stream`
 * for the rest. Never an active type, whatever the agent stored or the file is named.
 *
 * @beta
 */
export function passiveContentType(stored: string | null | undefined, content: Uint8Array): string {
  const text = isUtf8Text(content);
  const type = passiveStoredType(stored);
  if (type !== undefined && PASSIVE_TEXT.has(type) && text) return `${type}; charset=utf-8`;
  if (type !== undefined && PASSIVE_BINARY.has(type)) return type;
  return text ? PLAIN_TEXT_TYPE : 'application/octet-stream';
}
