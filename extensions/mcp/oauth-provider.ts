/**
 * The SDK's `OAuthClientProvider` for one registration, kept in the daemon's sealed secrets
 * (`ctx.secrets`, see docs/mcp.md "OAuth sign-in"): the tokens, the client registration the
 * authorization server gave (dynamic registration) and the discovery state, each under
 * `oauth:<server>:<part>`. A registration signed in to per agent (`oauth.signIn: per-agent`) keeps each
 * agent's tokens under `oauth:<server>:agent:<agentId>:<part>`: the key names the agent, so a
 * connection of one agent never reads another's. The SDK's `auth()` does the protocol (RFC 9728 and RFC 8414 discovery, PKCE,
 * Client ID Metadata Documents, dynamic registration, refresh); this class only stores what it hands over.
 *
 * Two modes: `login` (a sign-in the owner started: it has a redirect URL, a state and a code verifier,
 * and `redirectToAuthorization` hands the URL to the owner) and `connect` (a server connection: it
 * presents the tokens and refreshes them, and an expired sign-in only marks the server as signed out;
 * it never starts a flow by itself).
 */
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthTokens,
} from '@modelcontextprotocol/client';
import type { ExtensionEnv, ExtensionSecrets, McpRegistration } from '@agt/contracts';

/** What is kept of a sign-in: the SDK's tokens (with `issuer`) and when they were saved. */
export interface StoredTokens {
  url: string;
  tokens: OAuthTokens;
  savedAt: number;
  /** Epoch ms when the access token expires, when the server said. */
  expiresAt?: number;
  /** The redirect URL the client registration was made with (refresh keeps presenting it). */
  redirectUrl: string;
}

interface StoredClient {
  url: string;
  info: OAuthClientInformationMixed;
}

interface StoredDiscovery {
  url: string;
  state: OAuthDiscoveryState;
}

/** What a sign-in keeps: the tokens and the scopes a server said they lack are the signed-in account's. */
type Part = 'tokens' | 'client' | 'discovery' | 'client-secret' | 'scope-needed';
const ACCOUNT_PARTS = new Set<Part>(['tokens', 'scope-needed']);

export const secretName = (server: string, part: Part, agentId?: string) =>
  agentId !== undefined && ACCOUNT_PARTS.has(part)
    ? `oauth:${server}:agent:${agentId}:${part}`
    : `oauth:${server}:${part}`;

/** The agent ids with a sign-in of their own kept for `server` (from the sealed store's names). */
export const agentsSignedIn = (names: string[], server: string): string[] => {
  const prefix = `oauth:${server}:agent:`;
  return names.filter((n) => n.startsWith(prefix) && n.endsWith(':tokens')).map((n) => n.slice(prefix.length, -7));
};

/** The scopes a server asked for beyond the signed-in ones (its 403 `insufficient_scope`). */
interface StoredScopeNeeded {
  url: string;
  scope: string;
}

/**
 * Reads and writes one registration's parts (of one agent's account when `agentId` is given: its tokens
 * and needed scopes; the client registration and discovery are the registration's); each part remembers
 * the server URL it belongs to.
 */
export class OAuthStore {
  constructor(
    private readonly secrets: ExtensionSecrets,
    readonly server: string,
    readonly url: string,
    readonly agentId?: string,
  ) {}

  private async read<T extends { url: string }>(
    part: 'tokens' | 'client' | 'discovery' | 'scope-needed',
  ): Promise<T | undefined> {
    const text = await this.secrets.get(secretName(this.server, part, this.agentId));
    if (!text) return undefined;
    try {
      const value = JSON.parse(text) as T;
      // A registration whose URL changed starts over: its old server's tokens are not presented to the new one.
      return value.url === this.url ? value : undefined;
    } catch {
      return undefined;
    }
  }

  private write(part: 'tokens' | 'client' | 'discovery' | 'scope-needed', value: object): Promise<void> {
    return this.secrets.set(secretName(this.server, part, this.agentId), JSON.stringify({ url: this.url, ...value }));
  }

  tokens = () => this.read<StoredTokens>('tokens');
  client = async () => (await this.read<StoredClient>('client'))?.info;
  discovery = async () => (await this.read<StoredDiscovery>('discovery'))?.state;

  async saveTokens(tokens: OAuthTokens, redirectUrl: string): Promise<void> {
    const previous = await this.tokens();
    // A refresh answer without a new refresh token keeps the old one (RFC 6749 section 6).
    const merged: OAuthTokens =
      tokens.refresh_token || !previous?.tokens.refresh_token
        ? tokens
        : { ...tokens, refresh_token: previous.tokens.refresh_token };
    const now = Date.now();
    await this.write('tokens', {
      tokens: merged,
      savedAt: now,
      ...(typeof tokens.expires_in === 'number' ? { expiresAt: now + tokens.expires_in * 1000 } : {}),
      redirectUrl,
    });
  }

  saveClient = (info: OAuthClientInformationMixed) => this.write('client', { info });
  saveDiscovery = (state: OAuthDiscoveryState) => this.write('discovery', { state });
  scopeNeeded = async () => (await this.read<StoredScopeNeeded>('scope-needed'))?.scope;
  saveScopeNeeded = (scope: string) => this.write('scope-needed', { scope });

  /** The pre-registered client's secret the owner stored (`PUT /mcp/servers/{name}/client-secret`). */
  clientSecret = () => this.secrets.get(secretName(this.server, 'client-secret'));

  async forget(parts: Array<'tokens' | 'client' | 'discovery' | 'scope-needed'>): Promise<void> {
    for (const part of parts) await this.secrets.delete(secretName(this.server, part, this.agentId));
  }
}

export interface ProviderOptions {
  store: OAuthStore;
  registration: McpRegistration;
  env: ExtensionEnv;
  mode: 'login' | 'connect';
  /** Login: where the authorization server sends the browser back (the daemon's loopback listener). */
  redirectUrl?: string;
  /** Login: the `state` of this sign-in. */
  state?: string;
  /** Login: receives the authorization URL to show the owner. */
  onAuthorizationUrl?: (url: URL) => void;
  /** Connect: the sign-in has to be done again (refresh failed, or none was ever done). */
  onSignInNeeded?: () => void;
  /**
   * Login: the stored tokens are not offered to the SDK, so it asks the browser instead of refreshing
   * (a refresh never grants more scopes than the sign-in did).
   */
  fresh?: boolean;
}

export class McpOAuthProvider implements OAuthClientProvider {
  private verifier: string | undefined;
  /** The redirect URL a connection presents: the one its stored sign-in was made with. */
  private connectRedirect: string | undefined;

  constructor(private readonly options: ProviderOptions) {}

  /** Whether a pre-registered client has a secret (read by {@link prepare}). */
  private storedSecret: string | undefined;

  /** Reads, before the SDK asks, the redirect URL of the stored sign-in and whether the client has a secret. */
  async prepare(): Promise<StoredTokens | undefined> {
    const oauth = this.options.registration.oauth ?? {};
    this.storedSecret =
      (await this.options.store.clientSecret()) ??
      (oauth.clientSecretEnv ? this.options.env.get(oauth.clientSecretEnv) : undefined);
    const stored = await this.options.store.tokens();
    this.connectRedirect = stored?.redirectUrl;
    return stored;
  }

  get redirectUrl(): string | undefined {
    return this.options.mode === 'login' ? this.options.redirectUrl : this.connectRedirect;
  }

  get clientMetadataUrl(): string | undefined {
    return this.options.registration.oauth?.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const oauth = this.options.registration.oauth ?? {};
    const confidential = oauth.clientId !== undefined && this.storedSecret !== undefined;
    return {
      client_name: 'agt',
      redirect_uris: this.redirectUrl ? [this.redirectUrl] : [],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: confidential ? 'client_secret_post' : 'none',
      ...(oauth.scopes ? { scope: oauth.scopes } : {}),
    };
  }

  state(): string {
    return this.options.state ?? '';
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const oauth = this.options.registration.oauth ?? {};
    if (oauth.clientId) {
      // The owner's stored secret, else the daemon's variable the registration names.
      const secret =
        (await this.options.store.clientSecret()) ??
        (oauth.clientSecretEnv ? this.options.env.get(oauth.clientSecretEnv) : undefined);
      return { client_id: oauth.clientId, ...(secret ? { client_secret: secret } : {}) };
    }
    const info = await this.options.store.client();
    if (!info) return undefined;
    // A dynamic registration made for another redirect URL (the loopback listener moved) is made again.
    const uris = (info as { redirect_uris?: unknown }).redirect_uris;
    if (
      this.options.mode === 'login' &&
      Array.isArray(uris) &&
      this.redirectUrl &&
      !uris.includes(this.redirectUrl) &&
      info.client_id !== this.clientMetadataUrl
    )
      return undefined;
    return info;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    // A pre-registered client is the owner's setting, not something to store.
    if (this.options.registration.oauth?.clientId) return;
    await this.options.store.saveClient(info);
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    if (this.options.mode === 'login' && this.options.fresh) return undefined;
    return (await this.options.store.tokens())?.tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const redirect = this.redirectUrl ?? (await this.options.store.tokens())?.redirectUrl ?? '';
    await this.options.store.saveTokens(tokens, redirect);
  }

  redirectToAuthorization(url: URL): void {
    if (this.options.mode === 'login') this.options.onAuthorizationUrl?.(url);
    else this.options.onSignInNeeded?.();
  }

  /** A sign-in finished: the scopes a server had asked for are what it asked for now. */
  forgetScopeNeeded(): Promise<void> {
    return this.options.store.forget(['scope-needed']);
  }

  saveCodeVerifier(verifier: string): void {
    if (this.options.mode === 'login') this.verifier = verifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error('no sign-in is under way for this server');
    return this.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    return this.options.store.saveDiscovery(state);
  }

  discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return this.options.store.discovery();
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier') {
      this.verifier = undefined;
      return;
    }
    const parts = scope === 'all' ? (['tokens', 'client', 'discovery'] as const) : ([scope] as const);
    await this.options.store.forget([...parts]);
  }
}
