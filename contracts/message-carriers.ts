/**
 * Carriers of agents' messages: an extension that carries some outbox messages another way than the
 * transport of their address's scheme. The shipped `fleet` extension carries messages between the fleet's
 * agents over JetStream (durable, delivered once, kept while the receiver is down), whatever address names
 * the receiver (`did:…`, `mesh:<handle>`, a reply by `data.parent_id`); every other message goes to the
 * transport of its scheme (the mesh's HTTP for `did:`) as before.
 */
import { createExtensionPoint } from './extension.js';
import type { OutboundEnvelope, OutboundReport, OutboundResult } from './points.js';

/**
 * Takes the outbox messages it carries, before the transports see them.
 *
 * @beta
 */
export interface MessageCarrier {
  /**
   * Whether this carrier carries `envelope`. Asked for every outbox row (also one handed over again with
   * `resumed: true`) before the transports, carrier by carrier in load order, until one says true. Must
   * not deliver anything, and must answer within {@link CARRIER_DECISION_MS}: a later answer or a throw
   * counts as false (logged), and the message goes on to the next carrier, then to the transport of its
   * address's scheme.
   */
  takes(envelope: OutboundEnvelope): Promise<boolean> | boolean;
  /**
   * Delivers a message it took, exactly as `OutboundTransport.send`: resolve once delivered (the row
   * becomes `delivered`), reject when it cannot be (`failed`), report retried tries through `report`, and
   * send a resumed row under the message id it used the first time.
   */
  send(envelope: OutboundEnvelope, report: OutboundReport): Promise<OutboundResult | void>;
}

/** The most the kernel waits for one carrier's {@link MessageCarrier.takes}. @beta */
export const CARRIER_DECISION_MS = 5_000;

/**
 * All providers, in load order; the first whose `takes` says true delivers the message. Without a provider
 * (or when none takes a message) the transports decide, as without carriers.
 *
 * @beta
 */
export const messageCarriers = createExtensionPoint<MessageCarrier>('agt.message-carriers', { providers: 'all' });
