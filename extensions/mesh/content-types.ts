/** Content types of agent website files by extension; text types carry `charset=utf-8`. */
import { isUtf8Text, PLAIN_TEXT_TYPE } from '@agt/contracts';

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  json: 'application/json; charset=utf-8',
  map: 'application/json; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  ico: 'image/x-icon',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  wasm: 'application/wasm',
  pdf: 'application/pdf',
  mp3: 'audio/mpeg',
  mp4: 'video/mp4',
  webm: 'video/webm',
  wav: 'audio/wav',
};

/**
 * By the file's extension first (what browsers expect), else the stored type, else by the bytes: plain
 * text when they are UTF-8 text (never an active type guessed from them), else `application/octet-stream`.
 */
export function contentTypeOf(path: string, stored: string | null, content: Uint8Array): string {
  const extension = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  const known = extension ? TYPES[extension] : undefined;
  if (known) return known;
  if (stored && /^[a-z]+\/[a-z0-9.+-]+$/i.test(stored))
    return stored.startsWith('text/') ? `${stored}; charset=utf-8` : stored;
  return isUtf8Text(content) ? PLAIN_TEXT_TYPE : 'application/octet-stream';
}
