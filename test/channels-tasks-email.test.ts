/**
 * Owner tasks by email, against a real IMAP server (dovecot) and SMTP server (smtp-server): an approval is
 * mailed to the owner's address with a random Message-ID and the words to reply with; a reply from
 * another address (In-Reply-To naming the task mail) is refused with a receipt and the task stays open; the
 * owner's reply `approve` approves it (the quoted mail below it ignored), and is not an inbox message.
 */
import t from 'tap';
import { channelsRig, eventually } from './helpers/channels.js';
import { startDovecot } from './helpers/dovecot.js';
import { pendingApproval, task } from './helpers/owner-tasks.js';
import { startSmtpSink } from './helpers/smtp-sink.js';

const AGENT = 'agent@example.test';
const OWNER = 'Owner@Example.test';
const SMTP_PASSWORD = 'smtp-pass-31c9';

function reply(fields: { from: string; inReplyTo: string; id: string; subject: string; body: string }): string {
  return [
    `From: ${fields.from}`,
    `To: ${AGENT}`,
    `Subject: ${fields.subject}`,
    `Message-ID: ${fields.id}`,
    `In-Reply-To: ${fields.inReplyTo}`,
    `References: ${fields.inReplyTo}`,
    `Date: ${new Date().toUTCString()}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    fields.body,
    '',
  ].join('\r\n');
}

const dovecot = await startDovecot(t);
const skip = typeof dovecot === 'string' ? `email task tests need dovecot: ${dovecot}` : false;
if (skip) t.comment(skip);

t.test('email: an approval answered by the owner by reply; another address refused', { skip }, async (t) => {
  if (typeof dovecot === 'string') return;
  const sink = await startSmtpSink(t, AGENT, SMTP_PASSWORD);
  const rig = await channelsRig(t, { email: { idleDelayMs: 100, allowHosts: ['127.0.0.1'] } }, [], {
    owners: { email: OWNER },
  });
  const { d, agentId } = rig;
  await d.request('PUT', `/agents/${agentId}/credentials/adapter:email:IMAP_PASSWORD`, { value: dovecot.password });
  await d.request('PUT', `/agents/${agentId}/credentials/adapter:email:SMTP_PASSWORD`, { value: SMTP_PASSWORD });
  const put = await d.request('PUT', `/agents/${agentId}/adapters/email`, {
    enabled: true,
    config: {
      address: AGENT,
      imap: { host: dovecot.host, port: dovecot.port, security: 'none', user: dovecot.user },
      smtp: { host: sink.host, port: sink.port, security: 'none' },
      poll_interval_ms: 1000,
    },
    policy: { dm: 'none' },
  });
  t.equal(put.status, 200, JSON.stringify(put.body));
  await rig.waitStatus('email', 'connected');

  const approval = await pendingApproval(rig, 'via_email');
  const posted = await eventually('the task mailed to the owner', () =>
    sink.mails.find((mail) => mail.parsed.subject?.startsWith('[agt]')),
  );
  t.same(
    posted.envelopeTo.map((address) => address.toLowerCase()),
    [OWNER.toLowerCase()],
  );
  t.match(posted.parsed.text, /wants to run sys_set_meta/);
  t.match(posted.parsed.text, /approve: Approve/);
  const taskId = posted.parsed.messageId!;
  t.notOk(taskId.includes(approval.id), 'the Message-ID is not the task id');
  t.notMatch(taskId, /^<agt\.[^.]+\.0@/, 'nor derived from the agent and an outbox row');

  // Someone else replies "approve" to the task mail: refused by mail, the task stays open.
  dovecot.deliver(
    reply({
      from: 'Mallory <mallory@example.test>',
      inReplyTo: taskId,
      id: '<m1@example.test>',
      subject: `Re: ${posted.parsed.subject}`,
      body: 'approve',
    }),
  );
  const refusal = await eventually('the refusal', () =>
    sink.mails.find((mail) => mail.envelopeTo.includes('mallory@example.test')),
  );
  t.match(refusal.parsed.text, /Only the owner/);
  t.equal(refusal.parsed.inReplyTo, '<m1@example.test>');
  t.equal((await task(rig, approval.id)).status, 'pending_approval', 'the task stays open');

  // The owner replies, quoting the task mail below.
  dovecot.deliver(
    reply({
      from: `The Owner <${OWNER.toLowerCase()}>`,
      inReplyTo: taskId,
      id: '<o1@example.test>',
      subject: `Re: ${posted.parsed.subject}`,
      body: `approve\r\n\r\nOn Sun, 29 Nov 2026, agent wrote:\r\n> deny\r\n`,
    }),
  );
  const done = await eventually('the approved call run', async () => {
    const current = await task(rig, approval.id);
    return current.status === 'completed' ? current : undefined;
  });
  t.same(done.resolution, { action: 'approve' });
  const receipt = await eventually('the receipt', () =>
    sink.mails.find((mail) => mail.parsed.inReplyTo === '<o1@example.test>'),
  );
  t.equal(receipt.parsed.text?.trim(), 'Approved.');
  t.same(await rig.inbox(), [], 'neither reply became an inbox message');
});
