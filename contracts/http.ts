/** Shared route-schema pieces: the error body and the standard error responses for OpenAPI. */
import { Type, type TSchema } from 'typebox';

/**
 * The error body of every route. Extra fields (`identity`, `agentId`, `candidates`, ...) are allowed.
 *
 * @public
 */
export const ErrorBody = Type.Object(
  { error: Type.String(), code: Type.String() },
  { additionalProperties: true, description: 'Error: clients branch on `code`' },
);

/**
 * Responses every authenticated route can give, plus the ones named.
 *
 * @public
 */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 500: ErrorBody };
  for (const status of statuses) out[status] = ErrorBody;
  return out;
}

/**
 * `{agentId, success}`, the answer of many agent mutations.
 *
 * @public
 */
export const AgentSuccess = Type.Object({ agentId: Type.String(), success: Type.Boolean() });

/**
 * Path params of agent-scoped routes: id, handle or name.
 *
 * @public
 */
export const AgentIdParams = Type.Object({ id: Type.String({ minLength: 1 }) });

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * No bearer token (nor other credential) needed: set in a route's `config`. The Host / Origin /
     * Sec-Fetch-Site guards still apply. For an extension, only for what carries no data and changes
     * nothing by itself (a web page's static shell, a login exchange that checks its own secret).
     */
    public?: boolean;
  }
}
