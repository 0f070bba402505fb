/**
 * The HTTP side of {@link startTestExtension}: a fastify instance that validates and answers errors the
 * way the daemon does (the kernel's `kernel/http/app.ts` and `error-handler.ts`, which this package
 * cannot import), and the 503 of an extension that failed. `test/contracts-testing.test.ts` sends the
 * same requests to this and to a real daemon and expects the same answers.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AgtError, STATUS_DEFAULT_CODE } from '../errors.js';
import type { ExtensionHttp } from '../extension.js';

// As in the daemon: JSON bodies are typed already (a number where a string belongs is a 400), query
// strings, params and headers are text and are coerced; defaults applied, extra properties kept.
const ajvPool = AjvCompiler();
const AJV_BASE = { removeAdditional: false, useDefaults: true, allErrors: false } as const;
const bodyAjv = ajvPool({}, { customOptions: { ...AJV_BASE, coerceTypes: false } });
const textAjv = ajvPool({}, { customOptions: { ...AJV_BASE, coerceTypes: 'array' } });

const notFoundBody = (request: FastifyRequest) => ({ error: `no route ${request.method} ${request.url.split('?')[0]}`, code: 'not_found' });

/** The daemon's error mapping: every error becomes `{error, code}` with the status of its code. */
function sendError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof AgtError) {
    if (error.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    return reply.status(error.statusCode).send(error.toBody());
  }
  if ((typeof error.code === 'string' && error.code.startsWith('FST_ERR_CTP_')) || (error instanceof SyntaxError && error.statusCode === 400)) {
    const status = error.statusCode ?? 400;
    return reply.status(status).send({
      statusCode: status,
      code: error.code ?? 'FST_ERR_CTP_INVALID_JSON_BODY',
      error: status === 413 ? 'Payload Too Large' : status === 415 ? 'Unsupported Media Type' : 'Bad Request',
      message: error.message,
    });
  }
  if (error.validation) return reply.status(400).send({ error: `Invalid ${error.validationContext ?? 'request'}: ${error.message}`, code: 'bad_request' });
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 ? error.statusCode : 500;
  if (status >= 500) {
    request.log.error({ err: error }, 'unexpected error');
    return reply.status(status).send({ error: 'internal error; see the daemon log', code: STATUS_DEFAULT_CODE[status] ?? 'internal_error' });
  }
  return reply.status(status).send({ error: error.message, code: STATUS_DEFAULT_CODE[status] ?? 'bad_request' });
}

/** A root instance with the daemon's validation, error answers and not-found answer. */
export function testApp(): ExtensionHttp {
  const app = Fastify({ logger: false, forceCloseConnections: true, routerOptions: { maxParamLength: 512 } }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler((route) => (route.httpPart === 'body' ? bodyAjv : textAjv)(route as never) as never);
  app.setErrorHandler(sendError);
  app.setNotFoundHandler((request, reply) => void reply.status(404).send(notFoundBody(request)));
  return app;
}

/** The daemon's 503 for an extension that is not serving (`extension x is failed: ...`). */
export function unavailable(name: string, reason: string): AgtError {
  return new AgtError('unavailable', `extension ${name} is ${reason}; its routes are unavailable`, { details: { extension: name } });
}

/**
 * Guards an extension's scope as the kernel does: while `reason()` is not null every request answers
 * the 503, and (with `notFound`) an unknown path under the prefix answers the daemon's 404.
 */
export function guardScope(scope: FastifyInstance, name: string, reason: () => string | null, notFound: boolean): void {
  const refuse = (reply: FastifyReply, why: string) => {
    const error = unavailable(name, why);
    return reply.status(error.statusCode).send(error.toBody());
  };
  scope.addHook('onRequest', async (_request, reply) => {
    const why = reason();
    if (why !== null) return refuse(reply, why);
  });
  if (!notFound) return;
  scope.setNotFoundHandler((request, reply) => {
    const why = reason();
    if (why !== null) return refuse(reply, why);
    return reply.status(404).send(notFoundBody(request));
  });
}
