/**
 * The email adapter's settings (`adapters.email.config` of an agent) and the names of its sealed
 * credentials. Nothing secret lives in config: passwords are the agent's credentials
 * `adapter:email:IMAP_PASSWORD` and `adapter:email:SMTP_PASSWORD` (the latter defaults to the former,
 * for the usual single mail account).
 */
import { Type, type Static } from 'typebox';
import { assertValid } from '@agt/contracts';

const Security = Type.Union([Type.Literal('tls'), Type.Literal('starttls'), Type.Literal('none')], {
  description: '`tls` from the first byte, `starttls` (upgrade required), or `none` (plain text: a local relay only)',
});

const Host = Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.:\\[\\]-]+$' });
const Port = Type.Integer({ minimum: 1, maximum: 65535 });
const User = Type.String({ minLength: 1, maxLength: 320, description: 'login name; defaults to `address`' });

export const EmailConfigSchema = Type.Object(
  {
    address: Type.String({
      minLength: 3,
      maxLength: 320,
      pattern: '^[^\\s@<>]+@[^\\s@<>]+$',
      description: "the agent's mail address (From of what it sends)",
    }),
    name: Type.Optional(Type.String({ maxLength: 200, description: 'display name of From' })),
    imap: Type.Object(
      {
        host: Host,
        port: Type.Optional(Port),
        security: Type.Optional(Security),
        user: Type.Optional(User),
        mailbox: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'default INBOX' })),
      },
      { additionalProperties: false },
    ),
    smtp: Type.Object(
      {
        host: Host,
        port: Type.Optional(Port),
        security: Type.Optional(Security),
        user: Type.Optional(User),
      },
      { additionalProperties: false },
    ),
    idle: Type.Optional(
      Type.Boolean({ description: 'wait for new mail with IMAP IDLE (default true); polling runs either way' }),
    ),
    poll_interval_ms: Type.Optional(
      Type.Integer({
        minimum: 1000,
        maximum: 86_400_000,
        description: 'how often to look for new mail besides IDLE (default 60000)',
      }),
    ),
  },
  { additionalProperties: false },
);

export type EmailConfigInput = Static<typeof EmailConfigSchema>;

export type Security = 'tls' | 'starttls' | 'none';

export interface ServerSettings {
  host: string;
  port: number;
  security: Security;
  user: string;
}

export interface EmailSettings {
  address: string;
  name?: string;
  imap: ServerSettings & { mailbox: string };
  smtp: ServerSettings;
  idle: boolean;
  pollIntervalMs: number;
}

export const EMAIL_CREDENTIALS = {
  imapPassword: 'adapter:email:IMAP_PASSWORD',
  smtpPassword: 'adapter:email:SMTP_PASSWORD',
} as const;

/** The validated settings with defaults applied; throws `bad_request` naming the bad field. */
export function emailSettings(config: unknown): EmailSettings {
  const input = assertValid(EmailConfigSchema, config ?? {}, 'adapters.email.config');
  const imapSecurity = input.imap.security ?? (input.imap.port === 143 ? 'starttls' : 'tls');
  const smtpSecurity =
    input.smtp.security ?? (input.smtp.port === 465 || input.smtp.port === undefined ? 'tls' : 'starttls');
  return {
    address: input.address,
    ...(input.name ? { name: input.name } : {}),
    imap: {
      host: input.imap.host,
      port: input.imap.port ?? (imapSecurity === 'tls' ? 993 : 143),
      security: imapSecurity,
      user: input.imap.user ?? input.address,
      mailbox: input.imap.mailbox ?? 'INBOX',
    },
    smtp: {
      host: input.smtp.host,
      port: input.smtp.port ?? (smtpSecurity === 'tls' ? 465 : 587),
      security: smtpSecurity,
      user: input.smtp.user ?? input.address,
    },
    idle: input.idle ?? true,
    pollIntervalMs: input.poll_interval_ms ?? 60_000,
  };
}
