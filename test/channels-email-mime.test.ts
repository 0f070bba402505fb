/**
 * The email adapter's pure parts: which body parts are the text and which are attachments (from an IMAP
 * body structure), sizes before download, file names that stay one safe path segment, threading headers
 * of replies, stable Message-IDs, SMTP failure classification and the config's defaults and refusals;
 * the adapter's refusals before it reaches any server (owner host list, bad config, bad recipient).
 */
import t from 'tap';
import { emailSettings } from '../extensions/channels/adapters/email-config.js';
import {
  decodedSize,
  headerValue,
  messageIds,
  messageParts,
  outboundMessageId,
  replyHeaders,
  replySubject,
  safeFilename,
  threadRoot,
} from '../extensions/channels/adapters/email-mime.js';
import { classifySmtpError } from '../extensions/channels/adapters/email-smtp.js';
import { emailAdapterType } from '../extensions/channels/adapters/email.js';
import { AdapterConnectError, type AdapterHost } from '../contracts/channel-adapters.js';
import { normalizeAgentPath } from '../contracts/agent-paths.js';

t.test('body structure: text, html fallback, attachments', async (t) => {
  const structure = {
    type: 'multipart/mixed',
    childNodes: [
      {
        type: 'multipart/alternative',
        childNodes: [
          { part: '1.1', type: 'text/plain', size: 10, encoding: '7bit' },
          { part: '1.2', type: 'text/html', size: 30, encoding: 'quoted-printable' },
        ],
      },
      {
        part: '2',
        type: 'image/png',
        size: 400,
        encoding: 'base64',
        disposition: 'inline',
        parameters: { name: 'logo.png' },
      },
      {
        part: '3',
        type: 'text/plain',
        size: 12,
        encoding: '7bit',
        disposition: 'attachment',
        dispositionParameters: { filename: 'notes.txt' },
      },
      { part: '4', type: 'application/pdf', size: 4000, encoding: 'base64', disposition: 'attachment' },
    ],
  };
  const parts = messageParts(structure as never);
  t.equal(parts.plain?.part, '1.1');
  t.equal(parts.html?.part, '1.2');
  t.same(
    parts.attachments.map((a) => [a.part, a.filename]),
    [
      ['2', 'logo.png'],
      ['3', 'notes.txt'],
      ['4', undefined],
    ],
  );
  t.equal(decodedSize(parts.attachments[2]!), 2920, 'base64 shrinks by 3/4, less its line breaks');
  for (const size of [0, 1, 2, 3, 57, 999, 1000, 1001, 4096, 100_000]) {
    const wrapped = `${Buffer.alloc(size, 1).toString('base64').replace(/.{76}/g, '$&\r\n')}\r\n`;
    const estimate = decodedSize({
      part: '2',
      type: 'x/y',
      encoding: 'base64',
      encodedSize: Buffer.byteLength(wrapped),
    });
    t.ok(estimate <= size && estimate >= size - 6, `${size} bytes announced as ${estimate}: never above, close below`);
  }
  t.equal(decodedSize(parts.attachments[1]!), 12);

  const single = messageParts({ type: 'text/plain', size: 5, encoding: '7bit' } as never);
  t.equal(single.plain?.part, '1', 'a single-part body is part 1');
  t.same(messageParts(undefined), { attachments: [] });
});

t.test('attachment names are one safe agent path segment', async (t) => {
  for (const hostile of [
    '../../etc/passwd',
    '..',
    '.',
    '/abs',
    'a\\b',
    'nul\u0000byte',
    '  ',
    '.hidden',
    'x'.repeat(500),
  ]) {
    const name = safeFilename(hostile, 'fallback');
    t.notOk(name.includes('/'), `${JSON.stringify(hostile)} has no separator`);
    t.doesNotThrow(() => normalizeAgentPath(`inbox/email/1/${name}`), `${JSON.stringify(hostile)} -> ${name}`);
    t.ok(name.length <= 120);
  }
  t.equal(safeFilename(undefined, 'attachment-2'), 'attachment-2');
  t.equal(safeFilename('report.pdf', 'x'), 'report.pdf');
});

t.test('threading headers', async (t) => {
  t.same(messageIds('<a@x> <b@y>\r\n <c@z>'), ['<a@x>', '<b@y>', '<c@z>']);
  t.same(messageIds(undefined), []);
  const block = Buffer.from('Message-ID: <m2@x>\r\nReferences: <m0@x>\r\n <m1@x>\r\nIn-Reply-To: <m1@x>\r\n\r\n');
  t.equal(headerValue(block, 'references'), '<m0@x> <m1@x>', 'folded lines are joined');
  t.equal(headerValue(block, 'MESSAGE-ID'), '<m2@x>');
  t.equal(headerValue(block, 'subject'), undefined);
  t.equal(threadRoot('<m2@x>', ['<m0@x>', '<m1@x>'], ['<m1@x>']), '<m0@x>');
  t.equal(threadRoot('<m2@x>', [], ['<m1@x>']), '<m1@x>');
  t.equal(threadRoot('<m2@x>', [], []), '<m2@x>');

  const reply = replyHeaders({ messageId: '<m2@x>', references: ['<m0@x>', '<m1@x>'], subject: 'plans' });
  t.same(reply, { inReplyTo: '<m2@x>', references: ['<m0@x>', '<m1@x>', '<m2@x>'], subject: 'Re: plans' });
  t.equal(replySubject('RE: plans'), 'RE: plans', 'no Re: Re:');
  t.equal(replySubject(''), 'Re: your message');
  const long = replyHeaders({ messageId: '<last@x>', references: Array.from({ length: 40 }, (_, i) => `<r${i}@x>`) });
  t.equal(long.references.length, 20, 'long chains keep the first and the latest ids');
  t.equal(long.references[0], '<r0@x>');
  t.equal(long.references.at(-1), '<last@x>');
});

t.test('outbound Message-IDs are stable per outbox row', async (t) => {
  const a = outboundMessageId('agent-1', 7, 'bot@mail.example');
  t.equal(a, outboundMessageId('agent-1', 7, 'bot@mail.example'));
  t.not(a, outboundMessageId('agent-1', 8, 'bot@mail.example'));
  t.equal(
    outboundMessageId('agent-1', 7, 'bot@mail.example', 2),
    '<agt.agent-1.7.2@mail.example>',
    'chunks of one row differ',
  );
  t.match(a, /^<agt\.agent-1\.7@mail\.example>$/);
  t.match(outboundMessageId('a b<>', 1, 'x@y'), /^<agt\.a-b--\.1@y>$/, 'only atext characters');
});

t.test('SMTP failures: what may be retried, secrets kept out', async (t) => {
  const temp = classifySmtpError(Object.assign(new Error('451 try later'), { responseCode: 451 }), 'hunter22');
  t.match(temp, { retryable: true, responseCode: 451 });
  const perm = classifySmtpError(Object.assign(new Error('550 no such user'), { responseCode: 550 }), 'hunter22');
  t.match(perm, { retryable: false, responseCode: 550 });
  const auth = classifySmtpError(
    Object.assign(new Error('535 bad login for hunter22'), { code: 'EAUTH', responseCode: 535 }),
    'hunter22',
  );
  t.equal(auth.retryable, false);
  t.notMatch(auth.message, /hunter22/);
  t.equal(
    classifySmtpError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ESOCKET' }), 'x').retryable,
    true,
  );
});

t.test('config: defaults and refusals', async (t) => {
  const s = emailSettings({
    address: 'bot@example.com',
    imap: { host: 'imap.example.com' },
    smtp: { host: 'smtp.example.com' },
  });
  t.same(s.imap, { host: 'imap.example.com', port: 993, security: 'tls', user: 'bot@example.com', mailbox: 'INBOX' });
  t.same(s.smtp, { host: 'smtp.example.com', port: 465, security: 'tls', user: 'bot@example.com' });
  t.equal(s.idle, true);
  t.equal(s.pollIntervalMs, 60_000);
  t.equal(
    emailSettings({ address: 'b@e', imap: { host: 'h', port: 143 }, smtp: { host: 'h', port: 587 } }).smtp.security,
    'starttls',
  );
  const bad = (config: unknown, pattern: RegExp) =>
    t.throws(() => emailSettings(config), { code: 'bad_request', message: pattern });
  bad({ imap: { host: 'h' }, smtp: { host: 'h' } }, /address/);
  bad({ address: 'b@e', imap: { host: 'h', password: 'x' }, smtp: { host: 'h' } }, /imap/);
  bad({ address: 'b@e', imap: { host: 'h; rm -rf' }, smtp: { host: 'h' } }, /imap\/host/);
  bad({ address: 'b@e', imap: { host: 'h' }, smtp: { host: 'h' }, poll_interval_ms: 5 }, /poll_interval_ms/);
  bad(undefined, /address/);
});

t.test('adapter: refusals before any server is reached', async (t) => {
  const read: string[] = [];
  const host = (config: Record<string, unknown>, options: Record<string, unknown> = {}): AdapterHost => ({
    agentId: 'agt-x',
    type: 'email',
    config,
    options,
    credential: async (key) => {
      read.push(key);
      return 'pw';
    },
    receive: async () => {},
    lost: () => {},
    connected: () => {},
    logger: {
      debug() {},
      info() {},
      warn() {},
      error() {},
      child() {
        return this;
      },
    },
  });
  const config = { address: 'bot@example.com', imap: { host: 'imap.example.com' }, smtp: { host: 'evil.example.net' } };
  const pinned = emailAdapterType.create(host(config, { allowHosts: ['IMAP.example.com', 'smtp.example.com'] }));
  await t.rejects(
    pinned.connect(),
    new AdapterConnectError(
      "mail server evil.example.net is not in the owner's list (channels config types.email.allowHosts)",
    ),
  );
  const unlisted = emailAdapterType.create(host({ ...config, smtp: { host: 'imap.example.com' } }));
  await t.rejects(
    unlisted.connect(),
    new AdapterConnectError(
      "mail server imap.example.com is not in the owner's list (channels config types.email.allowHosts)",
    ),
    'no list: no server',
  );
  t.same(read, [], 'no credential is read for a server the owner did not list');
  await t.rejects(emailAdapterType.create(host({ address: 'nope' })).connect(), {
    name: 'AdapterConnectError',
    message: /adapters\.email\.config/,
  });
  await t.rejects(pinned.send({ chatId: 'a@b', text: 'x', outboxId: 1, chunk: 0 }), {
    name: 'AdapterSendError',
    message: /not connected/,
  });
  t.equal(emailAdapterType.type, 'email');
  t.same(emailAdapterType.credentials, ['IMAP_PASSWORD', 'SMTP_PASSWORD']);
});
