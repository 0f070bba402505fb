/**
 * OAuth 2.1 sign-in to HTTP MCP servers whose registration has `oauth` (docs/mcp.md "OAuth sign-in").
 *
 * The owner starts a sign-in (`POST /mcp/servers/{name}/login`, `agt mcp login`): the server is probed
 * once without a token so its `WWW-Authenticate` challenge names the Protected Resource Metadata and the
 * scopes, then the SDK's `auth()` discovers the authorization server, picks the client identity (a
 * pre-registered id, a Client ID Metadata Document, else dynamic registration) and builds the
 * authorization URL with PKCE (S256) and a random `state`. The browser comes back to a listener of the
 * daemon on 127.0.0.1 (a server of its own: the main API refuses cross-site navigations, which a
 * redirect from the authorization server is), which checks `state` and the `iss` of the answer
 * (RFC 9207), and has the SDK exchange the code. Tokens go to the sealed secrets only.
 *
 * Connections use a provider in `connect` mode: the SDK's transport presents the token and refreshes it
 * on a 401; this class also refreshes a token that expires within a minute before a connect or a call. A
 * 403 `insufficient_scope` needs the owner's consent to more scopes, which a connection never asks for by
 * itself: the call fails with `mcp_signin_required`, the scopes needed are kept (step-up.ts), and the next
 * sign-in asks for them. A registration with `oauth.signIn: per-agent` keeps one sign-in per agent (the
 * owner signs in for each), and an agent's connection reads only its own. No token ever reaches an agent,
 * a log line, an event or a response.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ExtensionEnv, ExtensionSecrets, Logger, McpRegistration, ServerGuards } from '@agt/contracts';
import {
  agentMissing,
  agentNotForRegistration,
  noSecretStore,
  notOAuth,
  registrationMissing,
  signInFailed,
  signInRequired,
} from './errors.js';
import { McpOAuthProvider, OAuthStore, agentsSignedIn, secretName } from './oauth-provider.js';
import { loadSdk } from './sdk.js';
import { scopeUnion } from './step-up.js';

/** A sign-in the owner started and the browser has not finished. */
interface PendingLogin {
  server: string;
  /** The agent whose own account this is (a per-agent registration). */
  agentId?: string;
  /** The account's key in `pending` and `failures`. */
  key: string;
  state: string;
  url: string;
  provider: McpOAuthProvider;
  resourceMetadataUrl?: URL;
  expiresAt: number;
  timer: NodeJS.Timeout;
  /** Set when the sign-in ended badly (shown by the status route until the next one starts). */
}

export interface SignInStatus {
  server: string;
  /** A per-agent registration: the agent whose sign-in this is. */
  agentId?: string;
  signedIn: boolean;
  /** A server answered that the sign-in lacks scopes: a new sign-in asks for these (the union). */
  scopeNeeded?: string;
  /** Epoch ms when the access token expires (refreshed before), when the server said. */
  expiresAt?: number;
  scope?: string;
  /** A sign-in is waiting for the browser. */
  pending: boolean;
  /** How the last sign-in ended badly, when it did. */
  error?: string;
}

export interface SignInDeps {
  secrets: ExtensionSecrets | undefined;
  env: ExtensionEnv;
  logger: Logger;
  serverGuards: ServerGuards;
  /** The registration of that name now, if any. */
  registration(name: string): McpRegistration | undefined;
  /** A loaded agent's id from its id, handle or name (the `agent` of a per-agent sign-in). */
  agentId(ref: string): string | undefined;
  /** Tokens changed (signed in, out): reconnect the servers that use them (of one agent, when given). */
  changed(server: string, agentId?: string): void;
  /** `oauthCallbackPort`: 0 picks a free port when the first sign-in starts. */
  callbackPort: number;
  /** How long a started sign-in waits for the browser. */
  loginTimeoutMs: number;
}

const REFRESH_MARGIN_MS = 60_000;

/** The key of one account: the registration's, or one agent's of a per-agent registration. */
const accountKey = (server: string, agentId?: string) => (agentId === undefined ? server : `${server}\n${agentId}`);

export const perAgent = (registration: McpRegistration) => registration.oauth?.signIn === 'per-agent';

export class OAuthSignIn {
  /** Sign-ins waiting for the browser, by account key and by `state`. */
  private readonly pending = new Map<string, PendingLogin>();
  private readonly byState = new Map<string, PendingLogin>();
  private readonly failures = new Map<string, string>();
  private readonly refreshing = new Map<string, Promise<void>>();
  private listener: FastifyInstance | undefined;
  private listening: Promise<string> | undefined;
  private port = 0;

  constructor(private readonly deps: SignInDeps) {}

  private secrets(): ExtensionSecrets {
    if (!this.deps.secrets) throw noSecretStore();
    return this.deps.secrets;
  }

  private oauthRegistration(name: string): McpRegistration & { url: string } {
    const registration = this.deps.registration(name);
    if (!registration) throw registrationMissing(name);
    if (registration.type !== 'http' || !registration.url || !registration.oauth) throw notOAuth(name);
    return registration as McpRegistration & { url: string };
  }

  /**
   * The store of one account: the registration's, or (`oauth.signIn: per-agent`) the agent's own. A
   * connection passes its agent's id either way; only a per-agent registration uses it.
   */
  store(registration: McpRegistration & { url: string }, agentId?: string): OAuthStore {
    return new OAuthStore(
      this.secrets(),
      registration.name,
      registration.url,
      perAgent(registration) ? agentId : undefined,
    );
  }

  /**
   * The agent a route names, checked against the registration: a per-agent registration needs one (a
   * loaded agent, by id, handle or name), an owner's sign-in takes none.
   */
  private accountOf(registration: McpRegistration, agent: string | undefined): string | undefined {
    if (!perAgent(registration)) {
      if (agent !== undefined) throw agentNotForRegistration(registration.name, false);
      return undefined;
    }
    if (agent === undefined) throw agentNotForRegistration(registration.name, true);
    const id = this.deps.agentId(agent);
    if (!id) throw agentMissing(agent);
    return id;
  }

  async status(name: string, agent?: string): Promise<SignInStatus> {
    const registration = this.oauthRegistration(name);
    const agentId = this.accountOf(registration, agent);
    const store = this.store(registration, agentId);
    const stored = await store.tokens();
    const scopeNeeded = await store.scopeNeeded();
    const failure = this.failures.get(accountKey(name, agentId));
    return {
      server: name,
      ...(agentId !== undefined ? { agentId } : {}),
      signedIn: stored !== undefined,
      ...(scopeNeeded ? { scopeNeeded } : {}),
      ...(stored?.expiresAt ? { expiresAt: stored.expiresAt } : {}),
      ...(stored?.tokens.scope ? { scope: stored.tokens.scope } : {}),
      pending: this.pending.has(accountKey(name, agentId)),
      ...(failure ? { error: failure } : {}),
    };
  }

  /**
   * Starts a sign-in: the authorization URL for the owner's browser, or no URL when the stored sign-in
   * could be renewed without it. After a server asked for more scopes, the sign-in asks for the union and
   * always goes through the browser (the owner consents to them).
   */
  async login(
    name: string,
    agent?: string,
  ): Promise<{ server: string; agentId?: string; authorizationUrl?: string; expiresAt?: number }> {
    const registration = this.oauthRegistration(name);
    const agentId = this.accountOf(registration, agent);
    const key = accountKey(name, agentId);
    const store = this.store(registration, agentId);
    const { auth, extractWWWAuthenticateParams } = await loadSdk();
    const redirectUrl = `${await this.callbackBase()}/callback`;
    this.cancel(key);
    this.failures.delete(key);
    // The server's own challenge names its metadata and the scopes it wants (MCP authorization, "Scope selection").
    let resourceMetadataUrl: URL | undefined;
    let scope: string | undefined;
    try {
      const probe = await fetch(registration.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'agt', version: '1.0.0' } },
        }),
        signal: AbortSignal.timeout(10_000),
      });
      await probe.body?.cancel().catch(() => {});
      if (probe.status === 401 || probe.status === 403)
        ({ resourceMetadataUrl, scope } = extractWWWAuthenticateParams(probe));
    } catch (error) {
      throw signInFailed(name, `the server did not answer: ${(error as Error).message}`);
    }
    const scopeNeeded = await store.scopeNeeded();
    if (scopeNeeded) scope = scopeUnion(scope, scopeNeeded);
    const state = randomBytes(24).toString('base64url');
    let authorizationUrl: URL | undefined;
    const provider: McpOAuthProvider = new McpOAuthProvider({
      store,
      registration,
      env: this.deps.env,
      mode: 'login',
      redirectUrl,
      state,
      onAuthorizationUrl: (url) => (authorizationUrl = url),
      fresh: scopeNeeded !== undefined,
    });
    await provider.prepare();
    let result: 'AUTHORIZED' | 'REDIRECT';
    try {
      result = await auth(provider, {
        serverUrl: registration.url,
        ...(scope ? { scope } : {}),
        ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
      });
    } catch (error) {
      throw signInFailed(name, `could not start: ${(error as Error).message.slice(0, 300)}`);
    }
    await this.checkIssuer(provider, name);
    const who = agentId !== undefined ? { agentId } : {};
    if (result === 'AUTHORIZED' || !authorizationUrl) {
      this.deps.changed(name, agentId);
      return { server: name, ...who };
    }
    const expiresAt = Date.now() + this.deps.loginTimeoutMs;
    const timer = setTimeout(() => {
      if (this.byState.get(state) !== login) return;
      this.cancel(key);
      this.failures.set(key, 'the browser did not come back in time; start the sign-in again');
    }, this.deps.loginTimeoutMs);
    timer.unref();
    const login: PendingLogin = {
      server: name,
      ...who,
      key,
      state,
      url: registration.url,
      provider,
      ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
      expiresAt,
      timer,
    };
    // The callback finds it by state; a new sign-in of the same account replaces it.
    this.byState.set(state, login);
    this.pending.set(key, login);
    this.deps.logger.info({ server: name, ...who }, `mcp sign-in to ${name} started`);
    return { server: name, ...who, authorizationUrl: authorizationUrl.href, expiresAt };
  }

  /**
   * A server answered 403 `insufficient_scope` (challenge `scope` = what the call needs): the account
   * needs the union of what it holds and what was asked. Kept until a sign-in grants it; the answer is
   * the error the call fails with.
   */
  async stepUp(registration: McpRegistration & { url: string }, agentId: string, challenge: string | undefined) {
    const account = perAgent(registration) ? agentId : undefined;
    const store = this.store(registration, account);
    const held = (await store.tokens())?.tokens.scope;
    const scope = scopeUnion(held, await store.scopeNeeded(), challenge);
    await store.saveScopeNeeded(scope);
    this.deps.logger.warn(
      { server: registration.name, ...(account !== undefined ? { agentId: account } : {}) },
      `mcp server ${registration.name} needs more scopes (${scope}): the owner signs in again`,
    );
    return signInRequired(registration.name, scope, account);
  }

  /**
   * The secret of the client the owner registered beforehand (`oauth.clientId`), kept sealed with the
   * tokens instead of in the daemon's environment; an empty value removes it.
   */
  async setClientSecret(name: string, value: string): Promise<{ server: string; clientSecretSet: boolean }> {
    const registration = this.oauthRegistration(name);
    if (!registration.oauth?.clientId)
      throw notOAuth(name, 'a client secret goes with a pre-registered oauth.clientId');
    const key = secretName(name, 'client-secret');
    if (value === '') await this.secrets().delete(key);
    else await this.secrets().set(key, value);
    return { server: name, clientSecretSet: value !== '' };
  }

  /** A registration was removed: everything kept for its sign-in is dropped (tokens of every account, client, secret). */
  async forget(name: string): Promise<void> {
    for (const [key, login] of [...this.pending]) if (login.server === name) this.cancel(key);
    for (const key of [...this.failures.keys()])
      if (key === name || key.startsWith(`${name}\n`)) this.failures.delete(key);
    if (!this.deps.secrets) return;
    const names = await this.deps.secrets.names();
    for (const agentId of agentsSignedIn(names, name))
      for (const part of ['tokens', 'scope-needed'] as const)
        await this.deps.secrets.delete(secretName(name, part, agentId));
    for (const part of ['tokens', 'client', 'discovery', 'client-secret', 'scope-needed'] as const)
      await this.deps.secrets.delete(secretName(name, part));
  }

  /** Signs out: the tokens are dropped (the client registration is kept for the next sign-in). */
  async logout(name: string, agent?: string): Promise<{ server: string; agentId?: string; signedOut: boolean }> {
    const registration = this.oauthRegistration(name);
    const agentId = this.accountOf(registration, agent);
    this.cancel(accountKey(name, agentId));
    const store = this.store(registration, agentId);
    const had = (await store.tokens()) !== undefined;
    await store.forget(['tokens', 'scope-needed']);
    const who = agentId !== undefined ? { agentId } : {};
    this.deps.logger.info({ server: name, ...who }, `mcp server ${name} signed out`);
    this.deps.changed(name, agentId);
    return { server: name, ...who, signedOut: had };
  }

  /**
   * A provider for a connection of `registration`, or why it cannot connect. A token that expires within
   * a minute is refreshed first.
   */
  async connectProvider(
    registration: McpRegistration & { url: string },
    agentId: string,
    onSignInNeeded: () => void,
  ): Promise<{ provider: McpOAuthProvider; secrets: string[] } | { reason: string }> {
    if (!this.deps.secrets) return { reason: 'this daemon offers no sealed store for sign-in tokens' };
    await this.refreshIfDue(registration, agentId);
    const provider = new McpOAuthProvider({
      store: this.store(registration, agentId),
      registration,
      env: this.deps.env,
      mode: 'connect',
      onSignInNeeded,
    });
    const stored = await provider.prepare();
    if (!stored)
      return {
        reason: perAgent(registration)
          ? `mcp_signin_required: not signed in for this agent (each agent signs in with its own account): the owner signs in with agt mcp login ${registration.name} --agent ${agentId}`
          : `mcp_signin_required: not signed in: the owner signs in with agt mcp login ${registration.name}`,
      };
    const secrets = [stored.tokens.access_token, stored.tokens.refresh_token ?? ''].filter((s) => s.length > 0);
    return { provider, secrets };
  }

  /** Refreshes the account's token when it expires within a minute (one refresh at a time per account). */
  async refreshIfDue(registration: McpRegistration & { url: string }, agentId: string): Promise<void> {
    const store = this.store(registration, agentId);
    const key = accountKey(registration.name, store.agentId);
    const running = this.refreshing.get(key);
    if (running) return running;
    const stored = await store.tokens();
    if (!stored?.expiresAt || !stored.tokens.refresh_token || stored.expiresAt - Date.now() > REFRESH_MARGIN_MS) return;
    const work = (async () => {
      const { auth } = await loadSdk();
      const provider = new McpOAuthProvider({
        store,
        registration,
        env: this.deps.env,
        mode: 'connect',
        onSignInNeeded: () => {},
      });
      await provider.prepare();
      try {
        await auth(provider, { serverUrl: registration.url });
      } catch (error) {
        this.deps.logger.warn(
          { server: registration.name },
          `mcp server ${registration.name}: refreshing the sign-in failed: ${(error as Error).message.slice(0, 200)}`,
        );
      }
    })().finally(() => this.refreshing.delete(key));
    this.refreshing.set(key, work);
    return work;
  }

  async stop(): Promise<void> {
    for (const key of [...this.pending.keys()]) this.cancel(key);
    await this.listener?.close().catch(() => {});
    this.listener = undefined;
    this.listening = undefined;
  }

  private cancel(key: string): void {
    const login = this.pending.get(key);
    if (!login) return;
    clearTimeout(login.timer);
    this.pending.delete(key);
    this.byState.delete(login.state);
  }

  /**
   * RFC 8414 section 3.3: the metadata's `issuer` must be the authorization server it was fetched for,
   * else another server's metadata could send the owner (and the code) elsewhere.
   */
  private async checkIssuer(provider: McpOAuthProvider, name: string): Promise<void> {
    const state = await provider.discoveryState();
    const issuer = state?.authorizationServerMetadata?.issuer;
    if (state && issuer && !sameIssuer(issuer, state.authorizationServerUrl)) {
      await provider.invalidateCredentials('discovery');
      throw signInFailed(
        name,
        `refused: the authorization server's metadata names the issuer ${issuer}, not ${state.authorizationServerUrl}`,
      );
    }
  }

  /** The loopback listener's origin, started on first use. */
  private callbackBase(): Promise<string> {
    this.listening ??= this.listen().catch((error) => {
      this.listening = undefined;
      throw error;
    });
    return this.listening;
  }

  private async listen(): Promise<string> {
    const app = this.deps.serverGuards.createServer({ logger: false }, { crossSiteNavigation: true, mdnsName: false });
    app.get('/callback', async (request, reply) => {
      const query = request.query as Record<string, string | undefined>;
      const page = await this.finish(query);
      reply.code(page.ok ? 200 : 400).type('text/html; charset=utf-8');
      return html(page.title, page.text);
    });
    const port = this.port || this.deps.callbackPort;
    await app.listen({ host: '127.0.0.1', port });
    const address = app.server.address();
    this.port = typeof address === 'object' && address ? address.port : port;
    this.listener = app;
    return `http://127.0.0.1:${this.port}`;
  }

  /** The browser came back: checks state and `iss`, then has the SDK exchange the code for tokens. */
  private async finish(
    query: Record<string, string | undefined>,
  ): Promise<{ ok: boolean; title: string; text: string }> {
    const login = typeof query.state === 'string' ? this.byState.get(query.state) : undefined;
    if (!login)
      return { ok: false, title: 'Unknown sign-in', text: 'No sign-in of this daemon waits for this answer.' };
    this.cancel(login.key);
    const name = login.server;
    const fail = (why: string) => {
      this.failures.set(login.key, why);
      this.deps.logger.warn({ server: name }, `mcp sign-in to ${name} failed: ${why}`);
      return { ok: false, title: 'Sign-in failed', text: `Signing in to ${name} failed: ${why}` };
    };
    if (query.error)
      return fail(
        `the authorization server answered ${String(query.error).slice(0, 100)}${query.error_description ? `: ${String(query.error_description).slice(0, 300)}` : ''}`,
      );
    if (!query.code) return fail('the answer carries no authorization code');
    // RFC 9207: the answer names the server that issued it, so a mixed-up server cannot inject its code.
    const metadata = (await login.provider.discoveryState())?.authorizationServerMetadata as
      | (Record<string, unknown> & { issuer?: string })
      | undefined;
    if (query.iss !== undefined) {
      if (!metadata?.issuer || !sameIssuer(query.iss, metadata.issuer))
        return fail(`the answer's issuer ${query.iss.slice(0, 200)} is not the authorization server's`);
    } else if (metadata?.authorization_response_iss_parameter_supported === true) {
      return fail('the authorization server promises an iss parameter and the answer has none');
    }
    const { auth } = await loadSdk();
    try {
      const result = await auth(login.provider, {
        serverUrl: login.url,
        authorizationCode: query.code,
        // The SDK checks `iss` once more (RFC 9207) and refuses a code whose answer it was not shown.
        ...(query.iss !== undefined ? { iss: query.iss } : {}),
        ...(login.resourceMetadataUrl ? { resourceMetadataUrl: login.resourceMetadataUrl } : {}),
      });
      if (result !== 'AUTHORIZED') return fail('the authorization server did not issue tokens');
    } catch (error) {
      return fail(`exchanging the code failed: ${(error as Error).message.slice(0, 300)}`);
    }
    this.failures.delete(login.key);
    // The new sign-in granted what it asked for: the scopes a server wanted are no longer missing.
    await login.provider.forgetScopeNeeded();
    this.deps.logger.info(
      { server: name, ...(login.agentId !== undefined ? { agentId: login.agentId } : {}) },
      `mcp server ${name} signed in`,
    );
    this.deps.changed(name, login.agentId);
    return { ok: true, title: 'Signed in', text: `agt is signed in to ${name}. You can close this window.` };
  }
}

function sameIssuer(a: string, b: string | URL): boolean {
  const strip = (value: string) => value.replace(/\/+$/, '');
  return strip(String(a)) === strip(String(b));
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function html(title: string, text: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>\n`;
}
