/**
 * A minimal ustar writer: just enough to hand the engine a root filesystem (folders, files, symbolic
 * links, all owned by root) for its image import. Names stay under 100 bytes, so no long-name records.
 */

export type TarEntry =
  | { type: 'dir'; name: string; mode: number }
  | { type: 'file'; name: string; mode: number; content: Buffer }
  | { type: 'symlink'; name: string; target: string };

const BLOCK = 512;
const TYPE_FLAG = { file: '0', symlink: '2', dir: '5' } as const;

function field(header: Buffer, offset: number, length: number, value: string): void {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length > length) throw new RangeError(`tar field "${value}" is longer than ${length} bytes`);
  bytes.copy(header, offset);
}

/** An octal number, zero-padded, NUL-terminated, as ustar writes it. */
const octal = (value: number, length: number) => value.toString(8).padStart(length - 1, '0');

function header(entry: TarEntry, size: number): Buffer {
  const block = Buffer.alloc(BLOCK);
  field(block, 0, 100, entry.type === 'dir' ? `${entry.name.replace(/\/$/, '')}/` : entry.name);
  field(block, 100, 8, octal(entry.type === 'symlink' ? 0o777 : entry.mode, 8));
  field(block, 108, 8, octal(0, 8));
  field(block, 116, 8, octal(0, 8));
  field(block, 124, 12, octal(size, 12));
  field(block, 136, 12, octal(0, 12));
  field(block, 148, 8, '        ');
  field(block, 156, 1, TYPE_FLAG[entry.type]);
  if (entry.type === 'symlink') field(block, 157, 100, entry.target);
  field(block, 257, 6, 'ustar');
  field(block, 263, 2, '00');
  field(block, 265, 32, 'root');
  field(block, 297, 32, 'root');
  let sum = 0;
  for (const byte of block) sum += byte;
  field(block, 148, 8, `${octal(sum, 7)}\0 `);
  return block;
}

/** The archive of `entries`, in order, with the two zero blocks that end it. */
export function tarArchive(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const content = entry.type === 'file' ? entry.content : Buffer.alloc(0);
    parts.push(header(entry, content.length), content);
    const pad = (BLOCK - (content.length % BLOCK)) % BLOCK;
    if (pad) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}
