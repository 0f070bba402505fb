/**
 * Secrets an extension keeps for the daemon as a whole rather than for one agent (`ctx.secrets`): the
 * OAuth tokens of an owner's sign-in to an MCP server, say. Agent credentials stay in each agent's
 * sealed file (`readCredential`); these belong to the owner's installation.
 *
 * The kernel seals them: every value is encrypted (XSalsa20-Poly1305) under a random data key, and that
 * key is sealed to this runtime's key and, when the owner identity exists, to the owner's, in a 0600
 * file of the data directory per extension. An extension sees only its own names. Never log a value,
 * never put one in an event or a response.
 */

/**
 * One extension's sealed secrets.
 *
 * @beta
 */
export interface ExtensionSecrets {
  /** The value, or undefined when none is stored (or the store cannot be opened on this daemon). */
  get(name: string): Promise<string | undefined>;
  /** Stores or replaces `value` under `name` (1 to 200 characters of letters, digits, `:_.-`). */
  set(name: string, value: string): Promise<void>;
  /** False when there was none. */
  delete(name: string): Promise<boolean>;
  /** The stored names, sorted (never values). */
  names(): Promise<string[]>;
}
