/**
 * Credentials routes (tag `Credentials`, docs/credentials.md): per-agent values sealed in the agent file. Every
 * answer is metadata (set, sealed, locked, length); a value is accepted by PUT and never returned.
 */
import { Type } from 'typebox';
import { AgentIdParams, AgentSuccess, errorResponses } from '@agt/contracts';
import { CREDENTIAL_NAME_PATTERN } from '../credentials/index.js';
import { MAX_CREDENTIAL_BYTES, type CredentialInfo } from '../credentials/service.js';
import type { EnvelopeState } from '../credentials/key-access.js';
import type { KernelRoutes } from './plugin.js';
import { notPasswordProtected } from '../credentials/errors.js';

const TAGS = ['Credentials'];
const NameParams = Type.Object({
  id: Type.String({ minLength: 1 }),
  name: Type.String({
    pattern: CREDENTIAL_NAME_PATTERN,
    description: 'credential name, for example `provider:openai`',
  }),
});
const LockReason = Type.Union(
  [
    Type.Literal('password'),
    Type.Literal('owner_locked'),
    Type.Literal('foreign'),
    Type.Literal('damaged'),
    Type.Null(),
  ],
  {
    description:
      'why the envelope is locked: `password` (password-protected, not unlocked since load), `owner_locked` (file from another installation, owner identity not ready), `foreign` (sealed for another owner and runtime), `damaged`; null when unlocked',
  },
);
const CredentialMeta = Type.Object(
  {
    name: Type.String(),
    set: Type.Boolean({ description: 'a value is stored' }),
    sealed: Type.Boolean({
      description: 'sealed in the envelope; false while a value replaced under lock waits for it to unlock',
    }),
    locked: Type.Boolean({ description: 'the value cannot be read now (the envelope is locked)' }),
    length: Type.Integer({ description: 'length of the value in characters' }),
    updated_at: Type.Union([Type.Integer(), Type.Null()], { description: 'epoch ms; null when not set' }),
  },
  { additionalProperties: false },
);
const EnvelopeFields = {
  agentId: Type.String(),
  locked: Type.Boolean(),
  reason: LockReason,
  passwordProtected: Type.Boolean({
    description: 'the agent needs its password to unlock its credentials; never autostarted',
  }),
};
const EnvelopeReply = Type.Object(EnvelopeFields, { additionalProperties: false });
export const ListReply = Type.Object(
  { ...EnvelopeFields, credentials: Type.Array(CredentialMeta) },
  { additionalProperties: false },
);
const OneReply = Type.Object({ agentId: Type.String(), credential: CredentialMeta }, { additionalProperties: false });

const envelopeReply = (agentId: string, state: EnvelopeState) => ({
  agentId,
  locked: state.locked,
  reason: state.reason,
  passwordProtected: state.passwordProtected,
});
const one = (agentId: string, credential: CredentialInfo) => ({ agentId, credential });

export const credentialRoutes: KernelRoutes<'credentials' | 'registry'> = async (app, { services }) => {
  const registry = services.registry;
  const service = services.credentials;

  app.get(
    '/credentials',
    {
      schema: {
        tags: TAGS,
        summary: "Metadata of the agent's credentials and whether its envelope is locked (never a value)",
        params: AgentIdParams,
        response: { 200: ListReply, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      const { state, credentials } = service.list(agent);
      return { ...envelopeReply(agent.id, state), credentials };
    },
  );

  app.get(
    '/credentials/:name',
    {
      schema: {
        tags: TAGS,
        summary: 'Metadata of one credential (`set: false` when there is none; never the value)',
        params: NameParams,
        response: { 200: OneReply, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      return one(agent.id, service.info(agent, request.params.name));
    },
  );

  app.put(
    '/credentials/:name',
    {
      schema: {
        tags: TAGS,
        summary:
          'Set a credential: sealed in the agent file at once; 409 `credentials_locked` while locked unless `replace: true`',
        description:
          'With `replace: true` while locked, the old sealed value is discarded unread, the new one is kept pending ' +
          '(`sealed: false`; sealed to the runtime and owner keys, never plaintext on disk) and sealed into the envelope ' +
          'automatically once it unlocks; `credential_replaced` is logged to the agent log. Unlocked, `replace` changes nothing.',
        params: NameParams,
        body: Type.Object(
          {
            value: Type.String({ minLength: 1, maxLength: MAX_CREDENTIAL_BYTES }),
            replace: Type.Optional(Type.Boolean({ default: false })),
          },
          { additionalProperties: false },
        ),
        response: { 200: OneReply, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      return one(agent.id, service.set(agent, request.params.name, request.body.value, request.body.replace === true));
    },
  );

  app.delete(
    '/credentials/:name',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete a credential (works while locked; `success` false when there was none)',
        params: NameParams,
        response: { 200: AgentSuccess, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      return { agentId: agent.id, success: service.delete(agent, request.params.name) };
    },
  );

  app.post(
    '/credentials/unlock',
    {
      schema: {
        tags: TAGS,
        summary: "Unlock a password-protected agent's credentials with its password (until it is unloaded)",
        description:
          '403 `wrong_password`; 409 `conflict` when the agent is not password-protected; 409 `identity_not_ready` when the file ' +
          'comes from another installation and the owner identity must be unlocked first; 409 `credentials_locked` when the ' +
          'envelope belongs to another owner. Clears the `CREDENTIALS_LOCKED` degraded flag (`agent.degraded` event).',
        params: AgentIdParams,
        body: Type.Object(
          { password: Type.String({ minLength: 1, maxLength: 1024 }) },
          { additionalProperties: false },
        ),
        response: { 200: EnvelopeReply, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      await service.keys.unlock(agent, request.body.password);
      service.watcher.check(agent);
      return envelopeReply(agent.id, service.state(agent));
    },
  );

  app.post(
    '/credentials/lock',
    {
      schema: {
        tags: TAGS,
        summary: "Lock a password-protected agent's credentials again (its key is dropped from memory)",
        description:
          'The agent becomes `degraded: CREDENTIALS_LOCKED`. 409 `conflict` when it is not password-protected.',
        params: AgentIdParams,
        response: { 200: EnvelopeReply, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      if (!service.state(agent).passwordProtected) {
        throw notPasswordProtected(agent.id);
      }
      service.keys.forget(agent.id);
      service.watcher.check(agent);
      return envelopeReply(agent.id, service.state(agent));
    },
  );
};
