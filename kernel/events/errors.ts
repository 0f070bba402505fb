/**
 * The coded errors of the event stream, one factory per meaning (the model is fastify's `lib/errors.js`).
 * Codes, messages and details are API.
 */
import { AgtError } from '@agt/contracts';

/** 503 `unavailable`: shutdown began; no new event stream is opened. */
export const daemonShuttingDown = () => new AgtError('unavailable', 'the daemon is shutting down');
