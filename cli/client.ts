/**
 * The daemon's HTTP API as the CLI uses it: JSON in and out, the bearer token on every request, and
 * failures turned into {@link CliError}s that say what to do (no daemon, refused token, an API error
 * with its `code`).
 */
import type { Connection } from './connection.js';
import { CliError, EXIT } from './errors.js';

export class ApiClient {
  constructor(readonly connection: Connection) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.connection.token ? { authorization: `Bearer ${this.connection.token}` } : {}), ...extra };
  }

  /** The fetch the event stream uses (same token, same failure messages). */
  readonly fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    try {
      return await fetch(input, {
        ...init,
        headers: { ...(init.headers as Record<string, string> | undefined), ...this.headers() },
      });
    } catch (error) {
      throw this.unreachable(error);
    }
  };

  unreachable(error: unknown): CliError {
    const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
    const why = cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error);
    return new CliError(
      `no agt daemon answers at ${this.connection.url} (${why}; the address came from ${this.connection.urlSource}).\n` +
        'Start one with `agtd` (or `npm start`), or point agt at it with --url or AGT_DAEMON_URL.',
      EXIT.unreachable,
    );
  }

  /** A refusal as the user should read it; 401 says where the token came from. */
  refusal(status: number, body: unknown): CliError {
    const parsed = (body && typeof body === 'object' ? body : {}) as { error?: string; code?: string };
    if (status === 401) {
      const where = this.connection.token
        ? `the token from ${this.connection.tokenSource} is not this daemon's`
        : `no token was found (looked at --token, AGT_DAEMON_TOKEN and ${this.connection.tokenSource})`;
      return new CliError(
        `the daemon at ${this.connection.url} refused the request: ${where}.\n` +
          "Use the token in the daemon's data directory (daemon-token), or set AGT_DAEMON_TOKEN / --token.",
        EXIT.unauthorized,
        parsed,
      );
    }
    const message = parsed.error ?? (typeof body === 'string' && body ? body : `HTTP ${status}`);
    return new CliError(`${message}${parsed.code ? ` (${parsed.code})` : ''}`, EXIT.failed, parsed);
  }

  async request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    const init: RequestInit = { method, headers: this.headers(headers) };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    let response: Response;
    try {
      response = await fetch(this.connection.url + path, init);
    } catch (error) {
      throw this.unreachable(error);
    }
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: keep the text for the message.
    }
    if (response.status >= 400) throw this.refusal(response.status, parsed);
    return parsed as T;
  }

  get<T = any>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  post<T = any>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }
}

/** A path segment (agent ids, names, task ids) made safe for a URL. */
export const seg = (value: string) => encodeURIComponent(value);
