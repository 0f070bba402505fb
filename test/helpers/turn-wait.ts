/**
 * Waiting for the end of a turn as a client does: on the daemon's `GET /events` stream (an `eventLog`),
 * the first event that ends `turnId` (turn.completed, agent.error, or chat.discarded naming it).
 */
import type { UmbilicalEvent } from '../../contracts/events.js';
import type { EventLog } from './events.js';
import { endedBy } from './turn-ends.js';

export const endsTurn = (event: UmbilicalEvent, turnId: string): boolean => endedBy(event as never).includes(turnId);

/** The event that ended `turnId` (already seen or still to come); rejects after `ms`. */
export const turnEnd = (log: EventLog, turnId: string, ms?: number): Promise<UmbilicalEvent> =>
  log.waitFor((event) => endsTurn(event, turnId), `the end of turn ${turnId}`, ms === undefined ? {} : { ms });
