/**
 * Agent identity routes (tag `Identity (agent)`): an agent's DID, who attested it and whether the
 * signatures hold, never key material; and re-keying.
 */
import { Type } from 'typebox';
import { AgentIdParams, errorResponses } from '@agt/contracts';
import type { KernelRoutes } from './plugin.js';

const TAGS = ['Identity (agent)'];
const Nullable = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

const AttestationView = Type.Object(
  {
    kind: Type.Union([Type.Literal('owner'), Type.Literal('runtime')], {
      description: '`owner`: the owner attestation; `runtime`: the runtime stamp',
    }),
    by: Type.String({ description: "the signer's did:key" }),
    signature: Type.String({
      description:
        'detached Ed25519 signature (base64) over `agt-attestation/v1\\n<kind>\\n<agentDid>\\n<agentId>\\n<created_at>`',
    }),
    created_at: Type.Integer({ description: 'epoch ms' }),
    valid: Type.Boolean({ description: "the signature verifies against `by` for this agent's current DID and id" }),
  },
  { additionalProperties: false },
);

const AgentIdentityReply = Type.Object(
  {
    agentId: Type.String(),
    did: Nullable("the agent's own did:key; null when the file has no identity yet"),
    ownerDid: Nullable('the DID that signed the owner attestation'),
    ownerIsYou: Type.Boolean({ description: "the owner attestation is valid and signed by this daemon's owner" }),
    scenario: Type.Union(
      [Type.Literal('mine'), Type.Literal('foreign'), Type.Literal('invalid'), Type.Literal('unclaimed')],
      {
        description:
          '`mine`: valid attestation by this owner; `foreign`: valid, by another owner; `invalid`: does not verify; `unclaimed`: no identity or no owner attestation',
      },
    ),
    runtimeDid: Nullable('the runtime that stamped the identity'),
    runtimeIsThis: Type.Boolean({ description: 'the runtime stamp is valid and by this daemon' }),
    attestations: Type.Array(AttestationView),
  },
  { additionalProperties: false },
);

export const agentIdentityRoutes: KernelRoutes<'agentIdentity' | 'registry'> = async (app, { services }) => {
  const registry = services.registry;
  const service = services.agentIdentity;

  app.get(
    '/identity',
    {
      schema: {
        tags: TAGS,
        summary: "The agent's DID, owner and attestations, each verified (never key material)",
        params: AgentIdParams,
        response: { 200: AgentIdentityReply, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const agent = registry.resolve(request.params.id);
      return service.describe(agent.file, agent.id);
    },
  );

  app.post(
    '/identity/regenerate',
    {
      schema: {
        tags: TAGS,
        summary: 'Give the agent a new key pair with a fresh owner attestation and runtime stamp',
        description:
          'The new secret key is sealed in the credentials envelope; the old key pair is gone. Also gives an identity to a file ' +
          'that has none. 409 `identity_not_ready` (with `identity`) unless the owner identity is ready; 409 `credentials_locked` ' +
          'while the envelope is locked. Emits `agent.identity.changed`.',
        params: AgentIdParams,
        response: { 200: AgentIdentityReply, ...errorResponses(404, 409) },
      },
    },
    async (request) => service.regenerate(registry.resolve(request.params.id)),
  );
};
