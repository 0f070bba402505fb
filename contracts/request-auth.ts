/**
 * `ctx.auth`: checks a credential a request to an extension's own server carries against the daemon's, so an
 * extension can serve something to the owner on a server the kernel's guard does not cover (the mesh server's
 * A2A extended card) without ever holding the daemon token. The kernel compares in constant time; the token never
 * leaves the kernel.
 */

/**
 * Whom a verified credential names. The daemon token stands for the daemon's owner (every route of the main API
 * is theirs), so `owner` is the one kind today; a caller that switches on `kind` stays correct as kinds are added.
 *
 * @beta
 */
export interface AuthPrincipal {
  readonly kind: 'owner';
}

/**
 * @beta
 */
export interface RequestAuth {
  /**
   * The principal the `Authorization` header's bearer token names (`Bearer <token>`, the spellings the main API
   * accepts), else undefined: no header, several, another scheme, or a token that is not the daemon's. The same
   * check as the main API's guard, the daemon token only (an extension's `requestCredentials`, such as the
   * console's browser sessions, stay on the main API). Synchronous and quick; never logs the header. The caller
   * refuses what answers undefined (HTTP 401 with `WWW-Authenticate: Bearer`) and never echoes the header.
   */
  verifyBearer(authorization: string | readonly string[] | undefined): AuthPrincipal | undefined;
}
