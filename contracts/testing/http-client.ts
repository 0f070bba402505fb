/** Real HTTP to a harness's server, as a client would send it. */

/**
 * One answer: the status, the body parsed as JSON when it is JSON (else the text), the headers and the raw text.
 *
 * @public
 */
export interface TestResponse {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/**
 * `request(method, path, body?, headers?)`: a `body` that is not a string is sent as JSON.
 *
 * @public
 */
export type TestRequest = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<TestResponse>;

/** A `request` function for `baseUrl`, adding `defaultHeaders` (the daemon's bearer token) to every call. */
export function httpClient(baseUrl: string, defaultHeaders: Record<string, string> = {}): TestRequest {
  return async (method, path, body, headers = {}) => {
    const sent: Record<string, string> = { ...defaultHeaders, ...headers };
    const init: RequestInit = { method, headers: sent };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      if (!Object.keys(sent).some((name) => name.toLowerCase() === 'content-type'))
        sent['content-type'] = 'application/json';
    }
    const response = await fetch(baseUrl + path, init);
    const text = await response.text();
    let parsed: unknown = text === '' ? undefined : text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: keep the text.
    }
    return { status: response.status, body: parsed, text, headers: response.headers };
  };
}
