/**
 * The authenticated extended agent card (A2A v1.0 `GetExtendedAgentCard`): what the owner shows a caller holding the
 * owner's credential, the daemon token sent as `Authorization: Bearer <token>` and checked by the kernel
 * (`ctx.auth`; docs/decisions.md, "The A2A extended card is the owner's"). The public card declares the scheme
 * and the capability; every other A2A method stays open as before. The extended card adds the agent's enabled
 * tools as skills, its model and its numeric limits: never a credential, an environment variable, an MCP
 * server's address or headers, or its instructions.
 */
import type { FastifyReply } from 'fastify';
import type { RequestAuth } from '@agt/contracts';
import type { MeshAgent } from '../directory.js';

/** The card's name of the bearer scheme (a key of `securitySchemes`). */
export const OWNER_SCHEME = 'agtOwnerToken';
/** An extension of the extended card: `params` say which model the agent runs on and its limits. */
export const DETAILS_EXTENSION = 'urn:agt:a2a:agent-details:v1';

const SCHEME_ABOUT =
  "The agt daemon owner's API token as `Authorization: Bearer <token>`; needed only for the extended agent card.";

/** `securitySchemes` of a card in the v1.0 form (the proto's JSON: one member naming the scheme's kind). */
export const v1SecuritySchemes = () => ({
  [OWNER_SCHEME]: { httpAuthSecurityScheme: { scheme: 'Bearer', description: SCHEME_ABOUT } },
});

/** `securitySchemes` of a card in the v0.3 form (OpenAPI's: `type` and `scheme`). */
export const v03SecuritySchemes = () => ({
  [OWNER_SCHEME]: { type: 'http', scheme: 'bearer', description: SCHEME_ABOUT },
});

/** The enabled tools the model sees, as skills (`tool:<name>`); a restricted one says it waits for the owner. */
export function toolSkills(agent: MeshAgent): Array<Record<string, unknown>> {
  const tools = Array.isArray(agent.view.config.tools) ? agent.view.config.tools : [];
  return tools
    .filter((tool) => tool && typeof tool.name === 'string' && tool.enabled === true && tool.visible !== false)
    .slice(0, 200)
    .map((tool) => ({
      id: `tool:${tool.name.slice(0, 95)}`,
      name: tool.name.slice(0, 200),
      description: tool.restricted
        ? `The agent's ${tool.name} tool; each call waits for its owner's approval.`
        : `The agent's ${tool.name} tool.`,
      tags: ['tool', ...(tool.restricted ? ['restricted'] : [])],
    }));
}

/** The `DETAILS_EXTENSION` entry: the model (provider id and model id) and the limits that are plain numbers. */
export function detailsExtension(agent: MeshAgent): Record<string, unknown> {
  const config = agent.view.config;
  const limits = Object.fromEntries(
    Object.entries(config.limits ?? {}).filter(
      ([key, value]) => typeof value === 'number' && Number.isFinite(value) && key.length <= 100,
    ),
  );
  return {
    uri: DETAILS_EXTENSION,
    description: 'the model this agent runs on and its limits, for a caller the owner trusts',
    params: {
      model: { provider: String(config.model?.provider ?? ''), model_id: String(config.model?.model_id ?? '') },
      limits,
    },
  };
}

/**
 * Answers 401 with RFC 6750's challenge (`error="invalid_token"` when a credential was sent) and `body`.
 * The header sent is never echoed.
 */
export function refuseUnauthenticated(reply: FastifyReply, sent: boolean, body: unknown) {
  reply.header('cache-control', 'no-store');
  const challenge = `Bearer realm="agt-mesh"${sent ? ', error="invalid_token"' : ''}`;
  return reply.code(401).header('www-authenticate', challenge).type('application/json').send(body);
}

export const UNAUTHENTICATED_MESSAGE =
  "the extended agent card needs the owner's credential: Authorization: Bearer <the daemon's API token>";

/** The caller asked for the extended card without the owner's credential (`sent`: it sent a wrong one). */
export class CallerUnauthenticated extends Error {
  constructor(readonly sent: boolean) {
    super(UNAUTHENTICATED_MESSAGE);
  }
}

/** How a request's `Authorization` header stands: the owner's, another (wrong), or none. */
export type CredentialCheck = 'owner' | 'wrong' | 'none';

export function credentialOf(auth: RequestAuth | undefined, header: string | string[] | undefined): CredentialCheck {
  if (header === undefined) return 'none';
  return auth?.verifyBearer(header)?.kind === 'owner' ? 'owner' : 'wrong';
}
