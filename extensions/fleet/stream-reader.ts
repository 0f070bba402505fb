/**
 * Reads a JetStream stream from a sequence on for as long as the reader is open, across the loss of its
 * consumer. The consumer is an ordered one: ephemeral, one replica, in memory, on one NATS node. When that
 * node dies, the client library neither notices soon (its idle heartbeat is half the pull's 30 s expiry) nor
 * makes a new consumer: it asks for the lost one's info, which no node answers, and retries forever. So the
 * reader watches the consumer itself: silence (no message and no heartbeat) for {@link SILENCE_MS}, or the
 * consumption ending, and it makes a new consumer that starts right after the last sequence it delivered, so
 * nothing is lost or delivered twice.
 */
import type { Logger } from '@agt/contracts';
import type { Consumer, ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';

/** How long a pull waits; the server sends an idle heartbeat every half of it while nothing comes. */
const PULL_EXPIRES_MS = 4_000;
/** Silence longer than this (two heartbeats and a margin for a busy event loop) means the consumer is lost. */
export const SILENCE_MS = 6_000;
const RETRY_MS = [250, 500, 1_000, 2_000];

interface Reading {
  consumer: Consumer;
  messages: ConsumerMessages;
}

export interface StreamReader {
  close(): void;
}

/**
 * Starts reading `stream` after sequence `after` (null: after its last message now). Resolves once the first
 * consumer is made (rejects when it cannot be); then calls `deliver` for each message in sequence order, and
 * `ended` once if the reader stops by itself (the NATS connection closed). `namePrefix` starts the names of
 * its consumers (default: the library's random one), so an operator listing them sees whose they are.
 */
export async function readStream(
  nc: NatsConnection,
  js: JetStreamClient,
  stream: string,
  after: number | null,
  deliver: (seq: number, data: Uint8Array, message: JsMsg) => void,
  ended: (reason: string) => void,
  logger: Logger,
  namePrefix?: string,
): Promise<StreamReader> {
  const { DeliverPolicy } = await import('@nats-io/jetstream');
  let cursor = after ?? (await (await js.streams.get(stream)).info()).state.last_seq;
  let closed = false;
  let current: ConsumerMessages | undefined;
  let serial = 0;

  const consume = async (): Promise<Reading> => {
    const consumer = await js.consumers.get(stream, {
      ...(namePrefix ? { name_prefix: `${namePrefix}_${(serial += 1)}` } : {}),
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: cursor + 1,
    });
    return { consumer, messages: await consumer.consume({ expires: PULL_EXPIRES_MS }) };
  };

  /** Delivers until the consumption ends or goes silent. */
  const drain = async ({ consumer, messages }: Reading): Promise<void> => {
    let heard = Date.now();
    const watch = setInterval(() => {
      if (Date.now() - heard > SILENCE_MS) {
        logger.info({ stream, after: cursor }, 'fleet: the stream consumer went silent; making a new one');
        messages.stop();
      }
    }, SILENCE_MS / 3);
    watch.unref();
    void (async () => {
      for await (const status of messages.status()) if (status.type === 'heartbeat') heard = Date.now();
    })().catch(() => {});
    try {
      for await (const message of messages) {
        heard = Date.now();
        // An ordered consumer made again may start before what was delivered: skip it.
        if (message.seq <= cursor) continue;
        cursor = message.seq;
        deliver(message.seq, message.data, message);
      }
    } catch (error) {
      logger.debug({ err: error, stream }, 'fleet: a stream consumer ended');
    } finally {
      clearInterval(watch);
      // The server drops it after five idle minutes anyway; a lost node answers nothing, hence no wait.
      void consumer.delete().catch(() => {});
    }
  };

  const run = async (first: Reading) => {
    let reading: Reading | undefined = first;
    let attempt = 0;
    while (!closed) {
      if (reading) {
        current = reading.messages;
        await drain(reading);
        current = undefined;
        reading = undefined;
        attempt = 0;
        continue;
      }
      if (nc.isClosed()) break;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]).unref());
      attempt += 1;
      if (closed) break;
      reading = await consume().catch((error: unknown) => {
        logger.debug({ err: error, stream }, 'fleet: a stream consumer could not be made yet; retrying');
        return undefined;
      });
      if (closed && reading) {
        // Closed while it was being made.
        reading.messages.stop();
        void reading.consumer.delete().catch(() => {});
      }
    }
    if (!closed) ended('the fleet stream ended; resume with Last-Event-ID');
  };

  void run(await consume());
  return {
    close: () => {
      closed = true;
      current?.stop();
    },
  };
}
