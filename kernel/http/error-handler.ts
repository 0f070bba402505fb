/** Installs the one error mapping (`contracts/error-answers.ts`) and the not-found answer on the daemon. */
import type { FastifyInstance } from 'fastify';
import { notFoundAnswer, sendErrorAnswer } from '@agt/contracts';

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(sendErrorAnswer);
  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send(notFoundAnswer(request));
  });
}
