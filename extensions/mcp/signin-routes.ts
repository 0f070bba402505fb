/**
 * `/mcp/servers/{name}/login`: the owner's OAuth sign-in to a registered HTTP server (oauth-signin.ts).
 * `POST` starts one and answers the authorization URL to open in a browser; `GET` says whether the
 * server is signed in (never a token); `DELETE` signs out. `?agent=` names the agent of a per-agent
 * registration's sign-in.
 */
import { errorResponses } from '@agt/contracts';
import type { ExtensionHttp } from '@agt/contracts';
import type { OAuthSignIn } from './oauth-signin.js';
import {
  ClientSecretBody,
  ClientSecretState,
  NameParams,
  SignInQuery,
  SignInStarted,
  SignInState,
  SignedOut,
  TAG,
} from './schemas.js';

export function registerSignInRoutes(http: ExtensionHttp, signIn: OAuthSignIn): void {
  http.post('/servers/:name/login', {
    schema: {
      tags: [TAG],
      summary: 'Start the OAuth sign-in to an MCP server',
      description:
        'For an http registration with `oauth`. Answers `authorizationUrl`: open it in a browser on this machine; the authorization server sends the browser back to the daemon on 127.0.0.1, which stores the tokens sealed. No `authorizationUrl` when the stored sign-in could be refreshed without the browser. After a server answered insufficient_scope (`scopeNeeded` in GET), asks for those scopes, always through the browser. A per-agent registration (`oauth.signIn: per-agent`) signs in one agent, named by `?agent=` (400 without it, or with it for an owner sign-in). 409 when the registration has no `oauth`, 502 when the server or its authorization server refuses.',
      params: NameParams,
      querystring: SignInQuery,
      response: { 200: SignInStarted, ...errorResponses(400, 404, 409, 502) },
    },
    handler: async (request) => signIn.login(request.params.name, request.query.agent),
  });

  http.get('/servers/:name/login', {
    schema: {
      tags: [TAG],
      summary: 'Whether the owner is signed in to an MCP server',
      params: NameParams,
      querystring: SignInQuery,
      response: { 200: SignInState, ...errorResponses(400, 404, 409) },
    },
    handler: async (request) => signIn.status(request.params.name, request.query.agent),
  });

  http.put('/servers/:name/client-secret', {
    schema: {
      tags: [TAG],
      summary: "Store the secret of an MCP server's pre-registered OAuth client",
      description:
        'For a registration with `oauth.clientId`: the secret is sealed with the sign-in tokens (never in settings, never answered); an empty `value` removes it. 409 when the registration has no `oauth.clientId`.',
      params: NameParams,
      body: ClientSecretBody,
      response: { 200: ClientSecretState, ...errorResponses(404, 409) },
    },
    handler: async (request) => signIn.setClientSecret(request.params.name, request.body.value),
  });

  http.delete('/servers/:name/login', {
    schema: {
      tags: [TAG],
      summary: 'Sign out of an MCP server',
      description: "Drops the stored tokens; the agents' connections to it are closed until the next sign-in.",
      params: NameParams,
      querystring: SignInQuery,
      response: { 200: SignedOut, ...errorResponses(400, 404, 409) },
    },
    handler: async (request) => signIn.logout(request.params.name, request.query.agent),
  });
}
