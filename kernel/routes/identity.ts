/**
 * Owner identity routes (tag `Owner identity`, docs/identity.md). The mutating
 * routes are loopback-only (docs/security.md). Secrets: the seed phrase leaves the daemon only in the create
 * response; passphrases and keys never appear in a response, log line or event.
 */
import { Type } from 'typebox';
import { errorResponses } from '@agt/contracts';
import { IdentityStatusSchema } from '../identity/types.js';
import type { KernelRoutes } from './plugin.js';

const TAGS = ['Owner identity'];
const IdentityReply = Type.Object({ identity: IdentityStatusSchema });
// Bodies refuse unknown keys so a typo (`password` for `passphrase`) is a 400, not a silent default.
const Passphrase = Type.String({
  minLength: 1,
  maxLength: 1024,
  description: 'Encrypts owner-secrets.json; never stored',
});
const CreateBody = Type.Object({ passphrase: Type.Optional(Passphrase) }, { additionalProperties: false });
const RestoreBody = Type.Object(
  {
    seedPhrase: Type.String({ minLength: 1, maxLength: 1024, description: 'BIP39 English mnemonic' }),
    passphrase: Type.Optional(Passphrase),
  },
  { additionalProperties: false },
);
const UnlockBody = Type.Object({ passphrase: Passphrase }, { additionalProperties: false });

export const identityRoutes: KernelRoutes<'identity'> = async (app, { services }) => {
  const identity = services.identity;

  app.get(
    '',
    {
      schema: {
        tags: TAGS,
        summary: 'Owner identity status (never key material)',
        response: { 200: IdentityStatusSchema, ...errorResponses() },
      },
    },
    async () => identity.status(),
  );

  app.post(
    '/create',
    {
      config: { loopbackOnly: true },
      // The body is optional (`curl -X POST` with AGT_OWNER_PASSPHRASE set): no body means `{}`.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags: TAGS,
        summary: 'Create the owner identity; the only response that ever carries the seed phrase (loopback only)',
        description:
          'Generates a 12-word BIP39 phrase. File storage needs `passphrase` unless AGT_OWNER_PASSPHRASE(_FILE) is set. ' +
          '409 `conflict` when an identity exists (or its file needs a restore).',
        body: CreateBody,
        response: {
          201: Type.Object({ identity: IdentityStatusSchema, seedPhrase: Type.String() }),
          ...errorResponses(409),
        },
      },
    },
    async (request, reply) => {
      const result = await identity.create(request.body.passphrase);
      return reply.status(201).send(result);
    },
  );

  app.post(
    '/restore',
    {
      config: { loopbackOnly: true },
      schema: {
        tags: TAGS,
        summary: 'Restore the owner identity from its seed phrase (loopback only)',
        description:
          'Allowed when there is no identity or its file is unusable (`restore-needed`; the damaged file is moved aside), ' +
          'and for the same owner when one exists (re-encrypts under the new passphrase). Another owner: 409 `conflict`.',
        body: RestoreBody,
        response: { 200: IdentityReply, ...errorResponses(409) },
      },
    },
    async (request) => identity.restore(request.body.seedPhrase, request.body.passphrase),
  );

  app.post(
    '/unlock',
    {
      config: { loopbackOnly: true },
      schema: {
        tags: TAGS,
        summary: 'Unlock the owner identity with its passphrase (loopback only); wrong: 403 `wrong_password`',
        body: UnlockBody,
        response: { 200: IdentityReply, ...errorResponses(409) },
      },
    },
    async (request) => identity.unlock(request.body.passphrase),
  );

  app.post(
    '/lock',
    {
      config: { loopbackOnly: true },
      schema: {
        tags: TAGS,
        summary: 'Lock the owner identity: its keys are wiped from memory (loopback only)',
        response: { 200: IdentityReply, ...errorResponses(409) },
      },
    },
    async () => identity.lock(),
  );

  app.post(
    '/confirm-backup',
    {
      config: { loopbackOnly: true },
      schema: {
        tags: TAGS,
        summary: 'Record that the seed phrase was written down (loopback only)',
        response: { 200: IdentityReply, ...errorResponses(409) },
      },
    },
    async () => identity.confirmBackup(),
  );
};
