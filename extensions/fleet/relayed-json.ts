/** JSON requests run on a daemon of the fleet as its owner (relay.ts, `ctx.requests`), and their answers. */
import { AgtError, type RelayedAnswer, type RelayedRequest } from '@agt/contracts';

export function json(method: string, url: string, body?: unknown): RelayedRequest {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body === undefined) return { method, url, headers };
  headers['content-type'] = 'application/json';
  return { method, url, headers, body: Buffer.from(JSON.stringify(body)).toString('base64') };
}

export function parsed(answer: RelayedAnswer): Record<string, unknown> {
  try {
    return JSON.parse(Buffer.from(answer.body, 'base64').toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** An answer that is not 2xx, as the error it carries (same status and code, and `restored` when it says). */
export function failure(answer: RelayedAnswer, step: string): AgtError {
  const body = parsed(answer);
  return new AgtError(
    typeof body.code === 'string' ? body.code : 'conflict',
    `${step}: ${typeof body.error === 'string' ? body.error : `status ${answer.statusCode}`}`,
    {
      status: answer.statusCode,
      details: { step, ...(typeof body.restored === 'boolean' ? { restored: body.restored } : {}) },
    },
  );
}
