/**
 * The HTTP side of {@link startTestExtension}: a fastify instance that validates and answers errors the
 * way the daemon does (the kernel's `kernel/http/app.ts` and `error-handler.ts`, which this package
 * cannot import), and the 503 of an extension that failed. `test/contracts-testing.test.ts` sends the
 * same requests to this and to a real daemon and expects the same answers.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { extensionUnavailable, notFoundAnswer, sendErrorAnswer } from '../error-answers.js';
import type { ExtensionHttp } from '../extension.js';

// As in the daemon: JSON bodies are typed already (a number where a string belongs is a 400), query
// strings, params and headers are text and are coerced; defaults applied, extra properties kept.
const ajvPool = AjvCompiler();
const AJV_BASE = { removeAdditional: false, useDefaults: true, allErrors: false } as const;
const bodyAjv = ajvPool({}, { customOptions: { ...AJV_BASE, coerceTypes: false } });
const textAjv = ajvPool({}, { customOptions: { ...AJV_BASE, coerceTypes: 'array' } });

/** A root instance with the daemon's validation, error answers and not-found answer. */
export function testApp(): ExtensionHttp {
  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    routerOptions: { maxParamLength: 512 },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler((route) => (route.httpPart === 'body' ? bodyAjv : textAjv)(route as never) as never);
  app.setErrorHandler(sendErrorAnswer);
  app.setNotFoundHandler((request, reply) => void reply.status(404).send(notFoundAnswer(request)));
  return app;
}

/** The daemon's 503 for an extension that is not serving (`extension x is failed: ...`). */
const unavailable = extensionUnavailable;

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
    return reply.status(404).send(notFoundAnswer(request));
  });
}
