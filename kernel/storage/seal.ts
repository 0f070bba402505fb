/**
 * Sealed backups: a backup file readable only by the owner identity.
 *
 * A random 32-byte file key is sealed to the owner's X25519 box key (the kernel's `sealTo`: an
 * ephemeral key pair and nacl.box, the primitive of the credentials envelopes), so sealing needs only
 * the owner's public key (a locked identity can seal) and opening needs the unlocked owner. The bytes
 * are encrypted with that key by ChaCha20-Poly1305 in frames of 1 MiB (Node's native AEAD; tweetnacl's
 * secretbox is pure JavaScript): each frame's nonce is its index plus a last-frame flag, and every frame
 * authenticates the header's hash, so a frame cannot be reordered, dropped, moved to another file or
 * the file cut short without opening failing.
 *
 * Layout: `AGT-SEALED-BACKUP 1\n`, the header as one JSON line, then frames of
 * `[u32 big-endian length][ciphertext with its 16-byte tag]`.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { sealTo, type SealedBox } from '../identity/sealed-box.js';

export const SEALED_MAGIC = 'AGT-SEALED-BACKUP 1\n';
const FRAME_BYTES = 1024 * 1024;
const TAG_BYTES = 16;
const MAX_HEADER_BYTES = 64 * 1024;

export interface SealedHeader {
  alg: 'x25519-sealedbox+chacha20-poly1305';
  /** The owner the file key is sealed to. */
  ownerDid: string;
  key: SealedBox;
  frameBytes: number;
  agentId: string;
  schemaVersion: number;
  createdAt: string;
}

export type UnsealFailure = 'not_sealed' | 'damaged' | 'foreign_owner';

export class UnsealError extends Error {
  constructor(
    readonly reason: UnsealFailure,
    message: string,
  ) {
    super(message);
  }
}

function nonce(index: number, last: boolean): Buffer {
  const bytes = Buffer.alloc(12);
  bytes[3] = last ? 1 : 0;
  bytes.writeBigUInt64BE(BigInt(index), 4);
  return bytes;
}

/** Reads exactly `length` bytes at `position` (fewer only at the end of the file). */
async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return buffer.subarray(0, done);
}

/** True when the file starts with the sealed-backup magic line. */
export async function isSealedFile(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    return (await readAt(handle, 0, SEALED_MAGIC.length)).toString('latin1') === SEALED_MAGIC;
  } finally {
    await handle.close();
  }
}

/**
 * Encrypts `src` into the new file `dst` (created 0600, never overwriting) for the owner whose box
 * public key is given. Resolves to the sealed file's size and SHA-256.
 */
export async function sealFile(
  src: string,
  dst: string,
  owner: { did: string; boxPublicKey: Uint8Array },
  meta: { agentId: string; schemaVersion: number },
): Promise<{ bytes: number; sha256: string }> {
  const fileKey = randomBytes(32);
  const header: SealedHeader = {
    alg: 'x25519-sealedbox+chacha20-poly1305',
    ownerDid: owner.did,
    key: sealTo(owner.boxPublicKey, fileKey),
    frameBytes: FRAME_BYTES,
    agentId: meta.agentId,
    schemaVersion: meta.schemaVersion,
    createdAt: new Date().toISOString(),
  };
  const headerLine = Buffer.from(`${JSON.stringify(header)}\n`, 'utf8');
  const aad = createHash('sha256').update(headerLine).digest();
  const hash = createHash('sha256');
  const input = await open(src, 'r');
  const output = await open(dst, 'wx', 0o600);
  let bytes = 0;
  const write = async (chunk: Buffer) => {
    hash.update(chunk);
    bytes += chunk.length;
    await output.write(chunk);
  };
  try {
    await write(Buffer.from(SEALED_MAGIC, 'latin1'));
    await write(headerLine);
    const size = (await input.stat()).size;
    for (let index = 0, position = 0; position < size || index === 0; index++, position += FRAME_BYTES) {
      const plain = await readAt(input, position, Math.min(FRAME_BYTES, size - position));
      const last = position + FRAME_BYTES >= size;
      const cipher = createCipheriv('chacha20-poly1305', fileKey, nonce(index, last), { authTagLength: TAG_BYTES });
      cipher.setAAD(aad, { plaintextLength: plain.length });
      const body = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      const length = Buffer.alloc(4);
      length.writeUInt32BE(body.length);
      await write(Buffer.concat([length, body]));
    }
    await output.sync();
  } finally {
    fileKey.fill(0);
    await input.close();
    await output.close();
  }
  return { bytes, sha256: hash.digest('hex') };
}

/** The header of a sealed file; {@link UnsealError} `not_sealed` / `damaged`. */
export async function readSealedHeader(
  path: string,
): Promise<{ header: SealedHeader; dataStart: number; headerLine: Buffer }> {
  const handle = await open(path, 'r');
  try {
    const start = await readAt(handle, 0, SEALED_MAGIC.length + MAX_HEADER_BYTES);
    if (start.subarray(0, SEALED_MAGIC.length).toString('latin1') !== SEALED_MAGIC)
      throw new UnsealError('not_sealed', 'not a sealed agt backup');
    const end = start.indexOf(0x0a, SEALED_MAGIC.length);
    if (end < 0) throw new UnsealError('damaged', 'the sealed backup has no complete header');
    const headerLine = start.subarray(SEALED_MAGIC.length, end + 1);
    let header: SealedHeader;
    try {
      header = JSON.parse(headerLine.toString('utf8')) as SealedHeader;
    } catch {
      throw new UnsealError('damaged', 'the sealed backup header is not JSON');
    }
    if (
      header?.alg !== 'x25519-sealedbox+chacha20-poly1305' ||
      typeof header.ownerDid !== 'string' ||
      !Number.isInteger(header.frameBytes) ||
      header.frameBytes < 1 ||
      header.frameBytes > 64 * FRAME_BYTES
    ) {
      throw new UnsealError('damaged', 'the sealed backup header is not one this build reads');
    }
    return { header, dataStart: end + 1, headerLine };
  } finally {
    await handle.close();
  }
}

/**
 * Decrypts the sealed file `src` into the new file `dst` (0600). `openKey` opens the sealed file key
 * (the owner identity's `ownerBoxOpen`; it throws 409 `identity_not_ready` while the identity is
 * locked). {@link UnsealError}: `foreign_owner` (sealed to another owner), `damaged` (any frame fails).
 */
export async function unsealFile(
  src: string,
  dst: string,
  ownerDid: string | null,
  openKey: (box: SealedBox) => Uint8Array | null,
): Promise<SealedHeader> {
  const { header, dataStart, headerLine } = await readSealedHeader(src);
  if (ownerDid !== null && header.ownerDid !== ownerDid)
    throw new UnsealError('foreign_owner', `the backup is sealed to another owner (${header.ownerDid})`);
  const key = openKey(header.key);
  if (key?.length !== 32)
    throw new UnsealError(
      ownerDid === null ? 'foreign_owner' : 'damaged',
      'the backup key does not open with this owner identity',
    );
  const aad = createHash('sha256').update(headerLine).digest();
  const input = await open(src, 'r');
  const output = await open(dst, 'wx', 0o600);
  try {
    const size = (await input.stat()).size;
    let position = dataStart;
    for (let index = 0; position < size; index++) {
      const lengthBytes = await readAt(input, position, 4);
      if (lengthBytes.length < 4) throw new UnsealError('damaged', 'the sealed backup is cut short');
      const length = lengthBytes.readUInt32BE();
      if (length < TAG_BYTES || length > header.frameBytes + TAG_BYTES)
        throw new UnsealError('damaged', `frame ${index} has a bad length`);
      const body = await readAt(input, position + 4, length);
      if (body.length < length) throw new UnsealError('damaged', 'the sealed backup is cut short');
      position += 4 + length;
      const decipher = createDecipheriv('chacha20-poly1305', key, nonce(index, position >= size), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(aad, { plaintextLength: length - TAG_BYTES });
      decipher.setAuthTag(body.subarray(length - TAG_BYTES));
      let plain: Buffer;
      try {
        plain = Buffer.concat([decipher.update(body.subarray(0, length - TAG_BYTES)), decipher.final()]);
      } catch {
        throw new UnsealError('damaged', `frame ${index} does not authenticate (damaged, truncated or altered)`);
      }
      await output.write(plain);
    }
    if (position === dataStart) throw new UnsealError('damaged', 'the sealed backup holds no data');
  } finally {
    key.fill(0);
    await input.close();
    await output.close();
  }
  return header;
}
