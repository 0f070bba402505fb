/**
 * Downloads a platform file into memory, never more than `maxBytes`: the body is read as a stream and
 * the request cancelled as soon as it grows past the limit, whatever size the platform announced.
 */
export class TooLarge extends Error {
  constructor(maxBytes: number) {
    super(`the file exceeds the ${maxBytes}-byte limit`);
  }
}

export async function fetchLimited(
  url: string,
  maxBytes: number,
  headers: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<Uint8Array> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`download timed out after ${timeoutMs} ms`)), timeoutMs);
  try {
    const response = await fetch(url, { headers, signal: controller.signal, redirect: 'follow' });
    if (!response.ok || !response.body) throw new Error(`download answered ${response.status}`);
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > maxBytes) throw new TooLarge(maxBytes);
    const chunks: Uint8Array[] = [];
    let total = 0;
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      total += chunk.byteLength;
      if (total > maxBytes) throw new TooLarge(maxBytes);
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, total);
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}
