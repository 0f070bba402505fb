/**
 * A real SMTP server for tests (npm `smtp-server` on 127.0.0.1:0, plain text, AUTH PLAIN/LOGIN against
 * one user) that keeps every message it accepts, parsed by mailparser. `rejectNext(code, message)` makes
 * the next DATA answer with an SMTP error (a 4xx the sender may retry, a 5xx it must not). Closed by
 * `t.teardown`.
 */
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface CapturedMail {
  envelopeFrom: string;
  envelopeTo: string[];
  user: string | undefined;
  raw: Buffer;
  parsed: ParsedMail;
}

export interface SmtpSink {
  host: string;
  port: number;
  mails: CapturedMail[];
  /** Resolves with the `count`-th captured mail (1-based), waiting for it; rejects after `ms`. */
  nth(count: number, ms?: number): Promise<CapturedMail>;
  rejectNext(code: number, message: string): void;
}

export async function startSmtpSink(
  t: Teardown,
  user = 'agent@example.test',
  password = 'smtp-secret',
): Promise<SmtpSink> {
  const mails: CapturedMail[] = [];
  const waiters: Array<() => void> = [];
  const rejections: Array<{ code: number; message: string }> = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    disableReverseLookup: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    closeTimeout: 500,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === password) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const rejection = rejections.shift();
        if (rejection) {
          const error = new Error(rejection.message) as Error & { responseCode: number };
          error.responseCode = rejection.code;
          callback(error);
          return;
        }
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then(
          (parsed) => {
            mails.push({
              envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              envelopeTo: session.envelope.rcptTo.map((r) => r.address),
              user: session.user as string | undefined,
              raw,
              parsed,
            });
            for (const wake of waiters.splice(0)) wake();
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.server.address() as AddressInfo).port;
  return {
    host: '127.0.0.1',
    port,
    mails,
    async nth(count, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (mails.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`failsafe: ${mails.length} of ${count} mails within ${ms} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => (clearTimeout(timer), resolve()));
        });
      }
      return mails[count - 1]!;
    },
    rejectNext(code, message) {
      rejections.push({ code, message });
    },
  };
}
