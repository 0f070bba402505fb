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
 * on a 401 (a 403 `insufficient_scope` would need a new browser sign-in, which a connection never starts
 * by itself: the call fails); this class also refreshes a token that expires within a minute before a
 * connect or a call. No token ever reaches an agent, a log line, an
 * event or a response.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ExtensionEnv, ExtensionSecrets, Logger, McpRegistration, ServerGuards } from '@agt/contracts';
import { noSecretStore, notOAuth, registrationMissing, signInFailed } from './errors.js';
import { McpOAuthProvider, OAuthStore, secretName } from './oauth-provider.js';
import { loadSdk } from './sdk.js';

/** A sign-in the owner started and the browser has not finished. */
interface PendingLogin {
  server: string;
  url: string;
  provider: McpOAuthProvider;
  resourceMetadataUrl?: URL;
  expiresAt: number;
  timer: NodeJS.Timeout;
  /** Set when the sign-in ended badly (shown by the status route until the next one starts). */
}

export interface SignInStatus {
  server: string;
  signedIn: boolean;
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
  /** Tokens changed (signed in, out): reconnect the servers that use them. */
  changed(server: string): void;
  /** `oauthCallbackPort`: 0 picks a free port when the first sign-in starts. */
  callbackPort: number;
  /** How long a started sign-in waits for the browser. */
  loginTimeoutMs: number;
}

const REFRESH_MARGIN_MS = 60_000;

export class OAuthSignIn {
  private readonly pending = new Map<string, PendingLogin>();
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

  store(registration: McpRegistration & { url: string }): OAuthStore {
    return new OAuthStore(this.secrets(), registration.name, registration.url);
  }

  async status(name: string): Promise<SignInStatus> {
    const registration = this.oauthRegistration(name);
    const stored = await this.store(registration).tokens();
    const failure = this.failures.get(name);
    return {
      server: name,
      signedIn: stored !== undefined,
      ...(stored?.expiresAt ? { expiresAt: stored.expiresAt } : {}),
      ...(stored?.tokens.scope ? { scope: stored.tokens.scope } : {}),
      pending: this.pending.has(name),
      ...(failure ? { error: failure } : {}),
    };
  }

  /** Starts a sign-in: the authorization URL for the owner's browser, or `signedIn` when none was needed. */
  async login(name: string): Promise<{ server: string; authorizationUrl?: string; expiresAt?: number }> {
    const registration = this.oauthRegistration(name);
    const { auth, extractWWWAuthenticateParams } = await loadSdk();
    const redirectUrl = `${await this.callbackBase()}/callback`;
    this.cancel(name);
    this.failures.delete(name);
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
    const state = randomBytes(24).toString('base64url');
    let authorizationUrl: URL | undefined;
    const provider: McpOAuthProvider = new McpOAuthProvider({
      store: this.store(registration),
      registration,
      env: this.deps.env,
      mode: 'login',
      redirectUrl,
      state,
      onAuthorizationUrl: (url) => (authorizationUrl = url),
    });
    await provider.prepare();
    let result: 'AUTHORIZED' | 'REDIRECT';
    try {
      result = await auth(provider, {
        serverUrl: registration.url,
        ...(scope ? { scope: scope } : {}),
        ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
      });
    } catch (error) {
      throw signInFailed(name, `could not start: ${(error as Error).message.slice(0, 300)}`);
    }
    await this.checkIssuer(provider, name);
    if (result === 'AUTHORIZED' || !authorizationUrl) {
      this.deps.changed(name);
      return { server: name };
    }
    const expiresAt = Date.now() + this.deps.loginTimeoutMs;
    const timer = setTimeout(() => {
      if (this.pending.get(state)?.server !== name) return;
      this.pending.delete(state);
      this.pending.delete(name);
      this.failures.set(name, 'the browser did not come back in time; start the sign-in again');
    }, this.deps.loginTimeoutMs);
    timer.unref();
    const login: PendingLogin = {
      server: name,
      url: registration.url,
      provider,
      ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
      expiresAt,
      timer,
    };
    // Keyed by both: the callback finds it by state, a new sign-in replaces the server's old one.
    this.pending.set(state, login);
    this.pending.set(name, login);
    this.deps.logger.info({ server: name }, `mcp sign-in to ${name} started`);
    return { server: name, authorizationUrl: authorizationUrl.href, expiresAt };
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

  /** A registration was removed: everything kept for its sign-in is dropped (tokens, client, secret). */
  async forget(name: string): Promise<void> {
    this.cancel(name);
    this.failures.delete(name);
    if (!this.deps.secrets) return;
    for (const part of ['tokens', 'client', 'discovery', 'client-secret'] as const)
      await this.deps.secrets.delete(secretName(name, part));
  }

  /** Signs out: the tokens are dropped (the client registration is kept for the next sign-in). */
  async logout(name: string): Promise<{ server: string; signedOut: boolean }> {
    const registration = this.oauthRegistration(name);
    this.cancel(name);
    const store = this.store(registration);
    const had = (await store.tokens()) !== undefined;
    await store.forget(['tokens']);
    this.deps.logger.info({ server: name }, `mcp server ${name} signed out`);
    this.deps.changed(name);
    return { server: name, signedOut: had };
  }

  /**
   * A provider for a connection of `registration`, or why it cannot connect. A token that expires within
   * a minute is refreshed first.
   */
  async connectProvider(
    registration: McpRegistration & { url: string },
    onSignInNeeded: () => void,
  ): Promise<{ provider: McpOAuthProvider; secrets: string[] } | { reason: string }> {
    if (!this.deps.secrets) return { reason: 'this daemon offers no sealed store for sign-in tokens' };
    await this.refreshIfDue(registration);
    const provider = new McpOAuthProvider({
      store: this.store(registration),
      registration,
      env: this.deps.env,
      mode: 'connect',
      onSignInNeeded,
    });
    const stored = await provider.prepare();
    if (!stored) return { reason: `not signed in: the owner signs in with agt mcp login ${registration.name}` };
    const secrets = [stored.tokens.access_token, stored.tokens.refresh_token ?? ''].filter((s) => s.length > 0);
    return { provider, secrets };
  }

  /** Refreshes the registration's token when it expires within a minute (one refresh at a time per server). */
  async refreshIfDue(registration: McpRegistration & { url: string }): Promise<void> {
    const running = this.refreshing.get(registration.name);
    if (running) return running;
    const store = this.store(registration);
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
    })().finally(() => this.refreshing.delete(registration.name));
    this.refreshing.set(registration.name, work);
    return work;
  }

  async stop(): Promise<void> {
    for (const key of [...this.pending.keys()]) this.cancel(key);
    await this.listener?.close().catch(() => {});
    this.listener = undefined;
    this.listening = undefined;
  }

  private cancel(name: string): void {
    const login = this.pending.get(name);
    if (!login) return;
    clearTimeout(login.timer);
    for (const [key, value] of this.pending) if (value === login) this.pending.delete(key);
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
    const login = typeof query.state === 'string' ? this.pending.get(query.state) : undefined;
    if (!login || login.server === query.state)
      return { ok: false, title: 'Unknown sign-in', text: 'No sign-in of this daemon waits for this answer.' };
    this.cancel(login.server);
    const name = login.server;
    const fail = (why: string) => {
      this.failures.set(name, why);
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
        ...(login.resourceMetadataUrl ? { resourceMetadataUrl: login.resourceMetadataUrl } : {}),
      });
      if (result !== 'AUTHORIZED') return fail('the authorization server did not issue tokens');
    } catch (error) {
      return fail(`exchanging the code failed: ${(error as Error).message.slice(0, 300)}`);
    }
    this.failures.delete(name);
    this.deps.logger.info({ server: name }, `mcp server ${name} signed in`);
    this.deps.changed(name);
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
