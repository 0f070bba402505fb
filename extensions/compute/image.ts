/**
 * The base image: no registry is reachable, so it is built here, from a statically linked busybox
 * the host has (Debian's `busybox-static`), packed as a root filesystem and imported through the
 * engine's image import. It holds `/bin/busybox` and a link per applet, an empty `/work` (the agents'
 * work dirs are mounted there) and `/tmp` (an in-memory mount at run time); nothing else.
 */
import { execFile } from 'node:child_process';
import { access, constants, open, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { Engine } from './engine.js';
import { isNotFound } from './engine.js';
import { busyboxMissing } from './errors.js';
import { LABEL_IMAGE } from './labels.js';
import { tarArchive, type TarEntry } from './tar.js';

const run = promisify(execFile);
export const BUSYBOX_CANDIDATES = ['/bin/busybox', '/usr/bin/busybox'];

const PT_INTERP = 3;

/**
 * True for a 64-bit little-endian ELF executable without a program interpreter (statically linked):
 * the image has no libc, so a dynamically linked busybox (Debian's `busybox`) would not start in it.
 */
export async function isStaticElf(path: string): Promise<boolean> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(64);
    await file.read(head, 0, 64, 0);
    if (head.readUInt32BE(0) !== 0x7f454c46 || head[4] !== 2 || head[5] !== 1) return false;
    const phoff = Number(head.readBigUInt64LE(0x20));
    const phentsize = head.readUInt16LE(0x36);
    const phnum = head.readUInt16LE(0x38);
    if (phentsize < 4 || phnum > 256) return false;
    const table = Buffer.alloc(phentsize * phnum);
    await file.read(table, 0, table.length, phoff);
    for (let i = 0; i < phnum; i++) if (table.readUInt32LE(i * phentsize) === PT_INTERP) return false;
    return true;
  } finally {
    await file.close();
  }
}

/** The first executable, statically linked busybox among `candidates`, or undefined. */
export async function findBusybox(candidates: readonly string[]): Promise<string | undefined> {
  for (const path of candidates) {
    try {
      await access(path, constants.X_OK);
      if (await isStaticElf(path)) return path;
    } catch {
      // Try the next one.
    }
  }
  return undefined;
}

/** The applets a busybox binary offers (`busybox --list`), safe names only. */
async function applets(busybox: string): Promise<string[]> {
  const { stdout } = await run(busybox, ['--list'], { timeout: 10_000, env: {} });
  return stdout.split('\n').filter((name) => /^[a-z0-9][a-z0-9_.-]*$/.test(name) && name !== 'busybox');
}

/** The root filesystem of the image, as a tar archive. */
export async function rootFilesystem(busybox: string): Promise<Buffer> {
  const entries: TarEntry[] = [
    { type: 'dir', name: 'bin', mode: 0o755 },
    { type: 'file', name: 'bin/busybox', mode: 0o755, content: await readFile(busybox) },
    ...(await applets(busybox)).map((name): TarEntry => ({ type: 'symlink', name: `bin/${name}`, target: 'busybox' })),
    { type: 'dir', name: 'etc', mode: 0o755 },
    {
      type: 'file',
      name: 'etc/passwd',
      mode: 0o644,
      content: Buffer.from('root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/work:/bin/false\n'),
    },
    { type: 'file', name: 'etc/group', mode: 0o644, content: Buffer.from('root:x:0:\nnogroup:x:65534:\n') },
    { type: 'dir', name: 'work', mode: 0o755 },
    { type: 'dir', name: 'tmp', mode: 0o1777 },
    { type: 'dir', name: 'proc', mode: 0o555 },
    { type: 'dir', name: 'sys', mode: 0o555 },
    { type: 'dir', name: 'dev', mode: 0o755 },
    { type: 'dir', name: 'root', mode: 0o700 },
  ];
  return tarArchive(entries);
}

/** Whether the engine has `image`. */
export async function imagePresent(engine: Engine, image: string): Promise<boolean> {
  try {
    await engine.call(`inspect the image ${image}`, (docker) => docker.getImage(image).inspect());
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/**
 * Builds and imports the image from the first busybox among `candidates`; `unavailable` naming what is
 * missing when there is none. Returns the busybox used.
 */
export async function buildImage(
  engine: Engine,
  image: string,
  candidates: readonly string[],
  daemonKey: string,
): Promise<string> {
  const busybox = await findBusybox(candidates);
  if (!busybox) throw busyboxMissing(candidates);
  const archive = await rootFilesystem(busybox);
  const [repo, tag = 'latest'] = splitReference(image);
  await engine.call(`import the image ${image}`, async (docker) => {
    const stream = (await docker.importImage(
      archive as never,
      {
        repo,
        tag,
        // Not the daemon label: containers inherit image labels, and someone else's container from this image is not
        // ours.
        changes: ['CMD ["/bin/sh"]', 'ENV PATH=/bin', `LABEL ${LABEL_IMAGE}=${daemonKey}`],
      } as never,
    )) as unknown as NodeJS.ReadableStream;
    await new Promise<void>((resolve, reject) => {
      // The engine streams JSON progress; an error arrives as `{error}` in it, not as a status.
      let failure: string | undefined;
      stream.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString('utf8').split('\n')) {
          try {
            const message = JSON.parse(line) as { error?: unknown };
            if (typeof message.error === 'string') failure = message.error;
          } catch {
            // A partial line: progress only.
          }
        }
      });
      stream.once('error', reject);
      stream.once('end', () => (failure ? reject(new Error(failure)) : resolve()));
    });
  });
  return busybox;
}

/** `name:tag` → [name, tag]; a registry port (`host:5000/name`) is not a tag. */
function splitReference(image: string): [string, string | undefined] {
  const slash = image.lastIndexOf('/');
  const colon = image.lastIndexOf(':');
  return colon > slash ? [image.slice(0, colon), image.slice(colon + 1)] : [image, undefined];
}
