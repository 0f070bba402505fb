/** The one place where every error becomes the spec's `{error, code}` body and status (section 7). */
import type { FastifyError, FastifyInstance } from 'fastify';
import { AgtError, STATUS_DEFAULT_CODE } from '../../contracts/errors.js';

/** The content-type parser's own errors keep the framework's shape (spec 7.3). */
function isParserError(error: FastifyError): boolean {
  return typeof error.code === 'string' && error.code.startsWith('FST_ERR_CTP_');
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AgtError) {
      if (error.statusCode >= 500) request.log.error({ err: error }, 'request failed');
      return reply.status(error.statusCode).send(error.toBody());
    }
    if (isParserError(error) || (error instanceof SyntaxError && error.statusCode === 400)) {
      const status = error.statusCode ?? 400;
      return reply.status(status).send({
        statusCode: status,
        code: error.code ?? 'FST_ERR_CTP_INVALID_JSON_BODY',
        error: status === 413 ? 'Payload Too Large' : status === 415 ? 'Unsupported Media Type' : 'Bad Request',
        message: error.message,
      });
    }
    if (error.validation) {
      const where = error.validationContext ?? 'request';
      return reply.status(400).send({ error: `Invalid ${where}: ${error.message}`, code: 'bad_request' });
    }
    const status = typeof error.statusCode === 'number' && error.statusCode >= 400 ? error.statusCode : 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'unexpected error');
      return reply.status(status).send({ error: 'internal error; see the daemon log', code: STATUS_DEFAULT_CODE[status] ?? 'internal_error' });
    }
    return reply.status(status).send({ error: error.message, code: STATUS_DEFAULT_CODE[status] ?? 'bad_request' });
  });

  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send({ error: `no route ${request.method} ${request.url.split('?')[0]}`, code: 'not_found' });
  });
}
