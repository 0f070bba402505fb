/**
 * How every error becomes the `{error, code}` body and its status: the daemon's error
 * handler and the extension test harness answer through these, so the two cannot drift apart.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AgtError, STATUS_DEFAULT_CODE } from './errors.js';

/** The content-type parser's own errors keep the framework's shape. */
function isParserError(error: FastifyError): boolean {
  return (
    (typeof error.code === 'string' && error.code.startsWith('FST_ERR_CTP_')) ||
    (error instanceof SyntaxError && error.statusCode === 400)
  );
}

/** Answers that mean "something this depends on is away or slow" (logged as one warning line). */
const EXPECTED_5XX = new Set([502, 503, 504]);

/**
 * Sends `error` as the daemon does; 5xx answers are logged, their details never sent.
 *
 * @beta
 */
export function sendErrorAnswer(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof AgtError) {
    // 502, 503, 504 (an engine, a vendor or an extension that is away or slow) are expected conditions: one
    // line without a stack. Any other 5xx is a bug worth its stack.
    if (EXPECTED_5XX.has(error.statusCode)) {
      request.log.warn(
        { code: error.code, status: error.statusCode, route: `${request.method} ${request.url.split('?')[0]}` },
        `request answered ${error.statusCode} ${error.code}: ${error.message}`,
      );
    } else if (error.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    return reply.status(error.statusCode).send(error.toBody());
  }
  if (isParserError(error)) {
    const status = error.statusCode ?? 400;
    return reply.status(status).send({
      statusCode: status,
      code: error.code ?? 'FST_ERR_CTP_INVALID_JSON_BODY',
      error: status === 413 ? 'Payload Too Large' : status === 415 ? 'Unsupported Media Type' : 'Bad Request',
      message: error.message,
    });
  }
  if (error.validation)
    return reply
      .status(400)
      .send({ error: `Invalid ${error.validationContext ?? 'request'}: ${error.message}`, code: 'bad_request' });
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 ? error.statusCode : 500;
  if (status >= 500) {
    request.log.error({ err: error }, 'unexpected error');
    return reply
      .status(status)
      .send({ error: 'internal error; see the daemon log', code: STATUS_DEFAULT_CODE[status] ?? 'internal_error' });
  }
  return reply.status(status).send({ error: error.message, code: STATUS_DEFAULT_CODE[status] ?? 'bad_request' });
}

/**
 * The body of a 404 for a path no route serves.
 *
 * @beta
 */
export const notFoundAnswer = (request: FastifyRequest) => ({
  error: `no route ${request.method} ${request.url.split('?')[0]}`,
  code: 'not_found',
});

/**
 * 503 `unavailable`: a route of an extension that is off, failed or waits for a dependency.
 *
 * @beta
 */
export const extensionUnavailable = (name: string, reason: string) =>
  new AgtError('unavailable', `extension ${name} is ${reason}; its routes are unavailable`, {
    details: { extension: name },
  });
