/**
 * The email adapter end to end, against a real IMAP server (Debian's dovecot, started by the test on a free loopback
 * port) and a real SMTP server (npm smtp-server on 127.0.0.1:0), through the real channels extension in the built
 * daemon: mail delivered by dovecot-lda → inbox row → on_inbox turn (scripted model, a fake OpenAI-format server) →
 * msg_send reply out through SMTP, threaded; the allow_from policy refusing a stranger; an attachment over the limit
 * refused with a note the agent reads; dovecot going away and coming back (the adapter reconnects and takes the mail
 * that arrived meanwhile); a reply by parent_id; a config change through PUT /agents/{id}/adapters/email (IDLE off: the
 * poll alone finds new mail); SMTP answers 451 (retried) and 550 (failed). One daemon and one dovecot serve every
 * subtest; they run in order.
 */
import t from 'tap';
import { join } from 'node:path';
import { reply, type FakeReply } from './fakes/openai.js';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { startDovecot } from './helpers/dovecot.js';
import { eventLog } from './helpers/events.js';
import { startSmtpSink } from './helpers/smtp-sink.js';
import { startToolDriver } from './helpers/tool-driver.js';

const FAILSAFE_MS = 15_000;
const AGENT_ADDRESS = 'agent@example.test';
const SMTP_PASSWORD = 'smtp-pass-8f2d';

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + FAILSAFE_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`failsafe: ${what} within ${FAILSAFE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function mail(fields: {
  from: string;
  subject: string;
  id: string;
  body: string;
  headers?: string;
  attachments?: Array<{ name: string; bytes: Buffer }>;
}): string {
  const head = `From: ${fields.from}\r\nTo: ${AGENT_ADDRESS}\r\nSubject: ${fields.subject}\r\nMessage-ID: ${fields.id}\r\nDate: ${new Date().toUTCString()}\r\nMIME-Version: 1.0\r\n${fields.headers ?? ''}`;
  if (!fields.attachments?.length) return `${head}Content-Type: text/plain; charset=utf-8\r\n\r\n${fields.body}\r\n`;
  const parts = [`Content-Type: text/plain; charset=utf-8\r\n\r\n${fields.body}\r\n`];
  for (const file of fields.attachments) {
    const base64 = file.bytes.toString('base64').replace(/.{76}/g, '$&\r\n');
    parts.push(
      `Content-Type: application/octet-stream; name="${file.name}"\r\nContent-Disposition: attachment; filename="${file.name}"\r\nContent-Transfer-Encoding: base64\r\n\r\n${base64}\r\n`,
    );
  }
  return `${head}Content-Type: multipart/mixed; boundary="b0undary"\r\n\r\n${parts.map((part) => `--b0undary\r\n${part}`).join('')}--b0undary--\r\n`;
}

const dovecot = await startDovecot(t);
const skip = typeof dovecot === 'string' ? `email channel tests need dovecot: ${dovecot}` : false;
if (skip) t.comment(skip);

t.test('email adapter against dovecot and smtp-server', { skip }, async (t) => {
  if (typeof dovecot === 'string') return;
  const sink = await startSmtpSink(t, AGENT_ADDRESS, SMTP_PASSWORD);
  // The model: replies the test queues (an inbox turn's msg_send), else `ok`; `send` runs msg_send in a turn.
  const script: FakeReply[] = [];
  const driver = await startToolDriver(t, () => script.shift() ?? reply.text('ok'));
  const d = await runDaemon(t, {
    extensions: {
      extensions: [
        {
          name: 'providers',
          module: join(ROOT, 'extensions/providers/index.ts'),
          enabled: true,
          config: { maxRetries: 0 },
        },
        {
          name: 'channels',
          module: join(ROOT, 'extensions/channels/index.ts'),
          enabled: true,
          // Quick reconnects and a prompt IDLE (imapflow waits 15 s by default before it idles).
          config: {
            reconnectBaseMs: 100,
            reconnectMaxMs: 400,
            sendAttempts: 3,
            types: { email: { idleDelayMs: 100, allowHosts: ['127.0.0.1'] } },
          },
        },
      ],
    },
    settings: { providers: [driver.provider] },
  });
  t.ok(d.url, `the daemon started: ${d.stderr()}`);
  const events = await eventLog(t, d);
  t.equal((await d.request('POST', '/identity/create', { passphrase: 'email-test-passphrase' })).status, 201);

  const path = await createAgentFile(tempDir(t), {
    name: 'mailer',
    model: driver.model,
    triggers: { on_inbox: { enabled: true, targets: [{ scope: 'agent' }] } },
    adapters: {
      email: {
        enabled: true,
        config: {
          address: AGENT_ADDRESS,
          name: 'Mail Agent',
          imap: { host: dovecot.host, port: dovecot.port, security: 'none', user: dovecot.user },
          smtp: { host: sink.host, port: sink.port, security: 'none' },
          poll_interval_ms: 1000,
        },
        policy: { dm: 'allowlist', allow_from: ['Bob@Example.test'] },
        limits: { max_attachment_size: 1000 },
      },
    },
  });
  const loaded = await d.request('POST', '/agents/load', { filePath: path });
  t.equal(loaded.status, 200);
  const id = loaded.body.id as string;
  const adapter = async () =>
    (await d.request('GET', `/agents/${id}/adapters`)).body.adapters?.find((a: { type: string }) => a.type === 'email');
  const inbox = async () => (await d.request('GET', `/agents/${id}/inbox`)).body.messages as any[];
  const outbox = async () => (await d.request('GET', `/agents/${id}/outbox`)).body.messages as any[];
  /** msg_send called by the agent's model in a turn of its own; resolves with what the tool answered. */
  const send = async (args: Record<string, unknown>) => {
    const result = await driver.run(d, id, 'msg_send', args);
    if (result.startsWith('Error: ')) throw new Error(`msg_send failed: ${result}`);
    return result;
  };
  const modelCalls = () => driver.fake.chatRequests();
  const turnsEnded = () => events.events.filter((e) => e.agent_id === id && e.event_type === 'turn.completed').length;

  await t.test(
    'without its password the adapter is in error, naming the credential; setting it connects',
    async (t) => {
      const before = await until('the adapter in error', async () => {
        const a = await adapter();
        return a?.status === 'error' ? a : undefined;
      });
      t.match(before.error, /adapter:email:IMAP_PASSWORD/);
      t.equal(
        (await d.request('PUT', `/agents/${id}/credentials/adapter:email:IMAP_PASSWORD`, { value: dovecot.password }))
          .status,
        200,
      );
      t.equal(
        (await d.request('PUT', `/agents/${id}/credentials/adapter:email:SMTP_PASSWORD`, { value: SMTP_PASSWORD }))
          .status,
        200,
      );
      const after = await until('the adapter connected', async () => {
        const a = await adapter();
        return a?.status === 'connected' ? a : undefined;
      });
      t.type(after.connectedAt, 'number');
      t.notMatch(
        JSON.stringify((await d.request('GET', `/agents/${id}/adapters`)).body),
        new RegExp(`${dovecot.password}|${SMTP_PASSWORD}`),
        'no secret in the status',
      );
    },
  );

  await t.test(
    'mail in → inbox row → turn → threaded reply out through SMTP; an oversized attachment is refused with a note',
    async (t) => {
      // The reply names what it answers as the inbox row shows it (data.chat, message_id, thread_id).
      const answer = {
        text: 'Thanks Bob, noted.',
        channel: 'email',
        recipient: 'email:bob@example.test',
        data: { reply_to_id: '<q2@example.test>', thread_id: '<q0@example.test>' },
      };
      script.push(reply.toolCalls([{ name: 'msg_send', args: answer }]), reply.text('replied'));
      const turns = turnsEnded();
      dovecot.deliver(
        mail({
          from: 'Bob Sender <bob@example.test>',
          subject: 'Quarterly numbers',
          id: '<q2@example.test>',
          headers: 'In-Reply-To: <q1@example.test>\r\nReferences: <q0@example.test> <q1@example.test>\r\n',
          body: 'Here are the numbers.',
          attachments: [
            { name: 'small.csv', bytes: Buffer.from('a,b\n1,2\n') },
            { name: 'huge.bin', bytes: Buffer.alloc(5000, 7) },
            { name: 'edge.bin', bytes: Buffer.alloc(1000, 1) },
          ],
        }),
        'bob@example.test',
      );
      const [row] = await until('the inbox row', async () => ((await inbox()).length > 0 ? await inbox() : undefined));
      t.match(row, { id: 1, source: 'channel:email', sender: 'email:bob@example.test' });
      t.match(row.text, /^Subject: Quarterly numbers\n\nHere are the numbers\./);
      t.match(row.text, /attachment "small\.csv" \(8 bytes\) stored as inbox\/email\//);
      t.match(row.text, /attachment "huge\.bin" refused: larger than the 1000 bytes limit/);
      t.match(row.text, /attachment "edge\.bin" \(1000 bytes\) stored as inbox\/email\//, 'exactly the limit is kept');
      t.match(row.data, {
        chat: 'email:bob@example.test',
        message_id: '<q2@example.test>',
        thread_id: '<q0@example.test>',
        reply_to_id: '<q1@example.test>',
        platform: { subject: 'Quarterly numbers' },
      });
      const stored = row.data.attachments[0].path as string;
      const file = await d.request('GET', `/agents/${id}/files/content?path=${encodeURIComponent(stored)}`);
      t.match(file.body, { path: stored, size: 8 });
      t.match(JSON.stringify(file.body), /a,b\\n1,2\\n|YSxiCjEsMgo=/, 'the small attachment is an agent file');
      t.equal(row.data.refused_attachments.length, 1);

      const sent = await sink.nth(1);
      t.same(sent.envelopeTo, ['bob@example.test']);
      t.equal(sent.user, AGENT_ADDRESS, 'logged in with the SMTP credential');
      t.equal(sent.parsed.subject, 'Re: Quarterly numbers');
      t.equal(sent.parsed.inReplyTo, '<q2@example.test>');
      t.same(sent.parsed.references, ['<q0@example.test>', '<q1@example.test>', '<q2@example.test>']);
      t.equal(sent.parsed.text?.trim(), 'Thanks Bob, noted.');
      t.equal(sent.parsed.from?.value[0]?.address, AGENT_ADDRESS);
      t.equal(sent.parsed.headers.get('auto-submitted'), 'auto-replied');
      t.match(sent.parsed.messageId, new RegExp(`^<agt\\.${id}\\.1@example\\.test>$`));
      const [out] = await until('the outbox row delivered', async () => {
        const rows = await outbox();
        return rows[0]?.status === 'delivered' ? rows : undefined;
      });
      t.match(out, { channel: 'email', status: 'delivered' });
      await until('the turn to end', () => turnsEnded() > turns);
      const seen = JSON.stringify(
        modelCalls().find((call) => JSON.stringify(call.body.messages).includes('Quarterly numbers'))?.body.messages,
      );
      t.match(
        seen,
        /huge\.bin[\\"]{0,12} refused: larger than the 1000 bytes limit/,
        'the agent reads the refusal note',
      );
    },
  );

  await t.test('a sender outside allow_from is refused: a log row, no inbox row, no turn', async (t) => {
    const calls = modelCalls().length;
    dovecot.deliver(
      mail({ from: 'mallory@evil.test', subject: 'hi', id: '<m1@evil.test>', body: 'let me in' }),
      'mallory@evil.test',
    );
    await until('the refusal in the agent log', async () => {
      const logs = (await d.request('GET', `/agents/${id}/logs`)).body.logs as Array<{ message: string }>;
      return (
        logs.some((log) =>
          /email:mallory@evil\.test refused: the sender is not in policy\.allow_from/.test(log.message),
        ) || undefined
      );
    });
    t.equal((await inbox()).length, 1, 'no inbox row');
    t.equal(modelCalls().length, calls, 'no model call');
  });

  await t.test('automated mail (Auto-Submitted) is never handed to the agent', async (t) => {
    dovecot.deliver(
      mail({
        from: 'bob@example.test',
        subject: 'Out of office',
        id: '<ooo@example.test>',
        body: 'away',
        headers: 'Auto-Submitted: auto-replied\r\n',
      }),
    );
    dovecot.deliver(
      mail({ from: 'bob@example.test', subject: 'marker', id: '<marker@example.test>', body: 'after the robot' }),
    );
    const rows = await until('the marker mail', async () => {
      const list = await inbox();
      return list.some((row) => row.data?.message_id === '<marker@example.test>') ? list : undefined;
    });
    t.notOk(rows.some((row) => row.data?.message_id === '<ooo@example.test>'));
  });

  await t.test(
    'the IMAP server goes away and comes back: the adapter reconnects and takes what arrived meanwhile',
    async (t) => {
      const before = await adapter();
      await dovecot.stop();
      await until('the adapter to notice', async () => ((await adapter())?.status !== 'connected' ? true : undefined));
      dovecot.dropIntoMaildir(
        mail({
          from: 'bob@example.test',
          subject: 'while you were away',
          id: '<away@example.test>',
          body: 'queued mail',
        }),
      );
      await dovecot.start();
      const after = await until('the adapter connected again', async () => {
        const a = await adapter();
        return a?.status === 'connected' && a.connectedAt > before.connectedAt ? a : undefined;
      });
      t.ok(after.recentErrors.length > 0, 'the drop is listed in recent errors');
      await until('the mail from the downtime', async () =>
        (await inbox()).some((row) => row.data?.message_id === '<away@example.test>') ? true : undefined,
      );
      t.equal(
        (await inbox()).filter((row) => row.data?.message_id === '<q2@example.test>').length,
        1,
        'mail already taken is not taken again',
      );
    },
  );

  await t.test("a reply by parent_id goes to the parent row's sender, in its thread", async (t) => {
    const parent = (await inbox()).find((row) => row.data?.message_id === '<away@example.test>');
    const count = sink.mails.length;
    await send({ text: 'Welcome back.', channel: 'email', data: { parent_id: parent.id } });
    const sent = await sink.nth(count + 1);
    t.same(sent.envelopeTo, ['bob@example.test']);
    t.equal(sent.parsed.subject, 'Re: while you were away', "the parent's subject, read back from the mailbox");
    t.equal(sent.parsed.inReplyTo, '<away@example.test>');
    t.same([sent.parsed.references].flat(), ['<away@example.test>'], 'mailparser gives one reference as a string');
  });

  await t.test(
    'PUT of the adapter config: refused when invalid; IDLE off reconciles to polling, which still finds new mail',
    async (t) => {
      const current = (await d.request('GET', `/agents/${id}/config`)).body.config.adapters.email;
      const bad = await d.request('PUT', `/agents/${id}/adapters/email`, {
        ...current,
        config: { ...current.config, imap: { host: 'x', password: 'in config' } },
      });
      t.equal(bad.status, 400, 'a password in config is refused by the schema');
      const before = await adapter();
      const put = await d.request('PUT', `/agents/${id}/adapters/email`, {
        ...current,
        config: { ...current.config, idle: false, poll_interval_ms: 1000 },
      });
      t.equal(put.status, 200);
      await until('the adapter reconnected with the new config', async () => {
        const a = await adapter();
        return a?.status === 'connected' && a.connectedAt > before.connectedAt ? a : undefined;
      });
      dovecot.deliver(
        mail({ from: 'bob@example.test', subject: 'polled', id: '<polled@example.test>', body: 'found by the poll' }),
      );
      await until('the polled mail', async () =>
        (await inbox()).some((row) => row.data?.message_id === '<polled@example.test>') ? true : undefined,
      );
      t.pass('taken without IDLE');
    },
  );

  await t.test('SMTP: a 451 is retried, a 550 fails the row', async (t) => {
    const count = sink.mails.length;
    sink.rejectNext(451, 'greylisted, try again later');
    await send({ text: 'A new mail\nwith two lines', channel: 'email', recipient: 'carol@example.test' });
    const fresh = await sink.nth(count + 1);
    t.same(fresh.envelopeTo, ['carol@example.test']);
    t.equal(fresh.parsed.subject, 'A new mail', 'a new mail takes its first line as subject');
    t.notOk(fresh.parsed.inReplyTo);
    const rows = await until('the retried row delivered', async () => {
      const list = await outbox();
      return list.at(-1)?.status === 'delivered' ? list : undefined;
    });
    t.equal(rows.at(-1).attempts, 2, 'one failed try, one that went through');

    sink.rejectNext(550, 'no such user');
    await send({ text: 'to nobody', channel: 'email', recipient: 'nobody@example.test' });
    const failed = await until('the refused row failed', async () => {
      const list = await outbox();
      return list.at(-1)?.status === 'failed' ? list.at(-1) : undefined;
    });
    t.match(failed.error, /550/);
    t.equal(failed.attempts, 1, 'a permanent refusal is not retried');
  });
});
