/**
 * A real IMAP server for tests: Debian's dovecot, run in the foreground with its own config in a temp dir
 * (nothing in /etc is read or touched), on a free loopback port, with one passwd-file user and a Maildir.
 * Mail is delivered with dovecot-lda, as a mail server would. `stop()` kills it (SIGKILL stops dovecot
 * cleanly) and `start()` brings it back on the same port, for reconnect tests. `t.teardown` kills it and
 * removes the temp dir. When dovecot is not installed (or cannot run here) `startDovecot` resolves to a
 * reason string instead, so the test can skip saying why.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

interface Teardown {
  teardown(fn: () => unknown): void;
}

const DOVECOT = '/usr/sbin/dovecot';
const LDA = '/usr/lib/dovecot/dovecot-lda';
/** nobody: dovecot's delivery tools refuse to run mail processes as uid 0. */
const MAIL_UID = 65534;

export interface Dovecot {
  host: string;
  port: number;
  user: string;
  password: string;
  /** The user's Maildir (owned by uid 65534). */
  maildir: string;
  /** Delivers a raw RFC 5322 message into the user's INBOX through dovecot-lda. */
  deliver(raw: string | Buffer, from?: string): void;
  /** Puts a raw message straight into the Maildir's `new/` (works while the server is down). */
  dropIntoMaildir(raw: string | Buffer): void;
  /** Kills the server (connections drop at once). */
  stop(): Promise<void>;
  /** Starts it again on the same port; resolves once it greets. */
  start(): Promise<void>;
  /** What dovecot wrote to stderr (its log). */
  log(): string;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

function config(dir: string, port: number): string {
  const root = process.getuid?.() === 0;
  const me = userInfo();
  // As root dovecot's defaults (dovenull login user, chrooted login) work; otherwise run everything as us.
  const unprivileged = root
    ? ''
    : `default_login_user = ${me.username}
default_internal_user = ${me.username}
default_internal_group = ${me.username}
service imap-login { chroot = }
service anvil { chroot = }
`;
  return `base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = /dev/stderr
info_log_path = /dev/stderr
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:${dir}/mail/%u/Maildir
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/users
}
userdb {
  driver = static
  args = uid=${root ? MAIL_UID : me.uid} gid=${root ? MAIL_UID : me.gid} home=${dir}/mail/%u
}
service imap-login {
  inet_listener imap {
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
${unprivileged}`;
}

/** Resolves once something at host:port sends an IMAP greeting; rejects after `ms`. */
async function greeting(port: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      const done = (value: boolean) => {
        socket.destroy();
        resolve(value);
      };
      socket.setTimeout(1000, () => done(false));
      socket.once('data', (chunk) => done(/^\* OK/.test(chunk.toString())));
      socket.once('error', () => done(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`dovecot did not greet on port ${port} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A running dovecot, or the reason it cannot run here. */
export async function startDovecot(t: Teardown, user = 'agent', password = 'secret'): Promise<Dovecot | string> {
  if (!existsSync(DOVECOT) || !existsSync(LDA))
    return `dovecot is not installed (${DOVECOT}; .ci/run installs the Debian package dovecot-imapd)`;
  const dir = mkdtempSync(join(tmpdir(), 'agt-dovecot-'));
  let child: ChildProcess | undefined;
  let stderr = '';
  t.teardown(async () => {
    await stopChild();
    rmSync(dir, { recursive: true, force: true });
  });
  const root = process.getuid?.() === 0;
  for (const sub of [
    'run',
    'state',
    `mail/${user}/Maildir/cur`,
    `mail/${user}/Maildir/new`,
    `mail/${user}/Maildir/tmp`,
  ])
    mkdirSync(join(dir, sub), { recursive: true });
  if (root) {
    // dovecot's auth process runs as the dovecot user: it must reach the passwd file.
    chmodSync(dir, 0o711);
    for (const sub of [
      'mail',
      `mail/${user}`,
      `mail/${user}/Maildir`,
      `mail/${user}/Maildir/cur`,
      `mail/${user}/Maildir/new`,
      `mail/${user}/Maildir/tmp`,
    ]) {
      chownSync(join(dir, sub), MAIL_UID, MAIL_UID);
    }
  }
  writeFileSync(join(dir, 'users'), `${user}:{PLAIN}${password}\n`);
  const port = await freePort();
  const conf = join(dir, 'dovecot.conf');
  writeFileSync(conf, config(dir, port));

  async function stopChild(): Promise<void> {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    // The whole process group: the per-connection imap processes outlive a killed master otherwise.
    try {
      process.kill(-running.pid!, 'SIGKILL');
    } catch {
      running.kill('SIGKILL');
    }
    await exited;
  }

  async function start(): Promise<void> {
    if (child) return;
    const proc = spawn(DOVECOT, ['-F', '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    child = proc;
    proc.stderr!.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<never>((_, reject) =>
      proc.once('exit', (code) => reject(new Error(`dovecot exited (${code}): ${stderr.slice(-500)}`))),
    );
    exited.catch(() => {});
    await Promise.race([greeting(port, 10_000), exited]);
  }

  try {
    await start();
  } catch (error) {
    await stopChild();
    return `dovecot cannot run here: ${(error as Error).message}`;
  }

  const maildir = join(dir, 'mail', user, 'Maildir');
  let dropped = 0;
  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    maildir,
    deliver(raw, from = 'sender@example.test') {
      const result = spawnSync(LDA, ['-c', conf, '-d', user, '-f', from], {
        input: raw,
        encoding: 'utf8',
        timeout: 10_000,
      });
      if (result.status !== 0) throw new Error(`dovecot-lda failed (${result.status}): ${result.stderr}`);
    },
    dropIntoMaildir(raw) {
      // Maildir's own delivery protocol: write under tmp/, then rename into new/ (atomic for readers).
      const name = `${Date.now()}.${process.pid}_${++dropped}.agt-test`;
      const temp = join(maildir, 'tmp', name);
      writeFileSync(temp, raw);
      if (root) chownSync(temp, MAIL_UID, MAIL_UID);
      renameSync(temp, join(maildir, 'new', name));
    },
    stop: stopChild,
    start,
    log: () => stderr,
  };
}
