/**
 * Watches a KV bucket for as long as the fleet runs, across the loss of the NATS node serving the watch. A
 * `kv.watch()` of @nats-io/kv is an ordered consumer on one node whose heartbeats the library keeps to itself
 * and whose idle heartbeat cannot be set: when that node dies, the watch is silent until the library's own
 * reset (a minute and more on a 3-node nats-server 2.9 cluster), or for good once its retries run out. So the
 * watch reads the bucket's stream with the fleet's stream reader instead, which makes a new consumer after a
 * few seconds of silence, right after the last revision it delivered: no update is lost or delivered twice
 * (docs/fleet.md, "Guarantees").
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '@agt/contracts';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { readStream, type StreamReader } from './stream-reader.js';

export interface KvUpdate {
  key: string;
  /** `DEL` and `PURGE` mark a key gone. */
  operation: 'PUT' | 'DEL' | 'PURGE';
  value: Uint8Array;
  revision: number;
}

/**
 * Calls `update` for each revision of `bucket` after `after` (0: every revision the bucket holds, so each key's
 * current value first; null: only those written from now on), in order. `owner` (this daemon's name) and
 * `purpose` start the names of its consumers. Resolves once the first consumer is made.
 */
export async function watchBucket(
  nc: NatsConnection,
  js: JetStreamClient,
  bucket: string,
  after: number | null,
  update: (entry: KvUpdate) => void,
  names: { owner: string; purpose: string },
  logger: Logger,
): Promise<StreamReader> {
  const prefix = `$KV.${bucket}.`;
  return readStream(
    nc,
    js,
    `KV_${bucket}`,
    after,
    (revision, value, message) => {
      if (!message.subject.startsWith(prefix)) return;
      const marker = message.headers?.get('KV-Operation');
      const operation = marker === 'DEL' || marker === 'PURGE' ? marker : 'PUT';
      update({ key: message.subject.slice(prefix.length), operation, value, revision });
    },
    () => logger.warn({ bucket }, 'fleet: a bucket watch ended (the NATS connection closed)'),
    logger,
    `${names.owner}_${names.purpose}_${randomBytes(4).toString('hex')}`,
  );
}
