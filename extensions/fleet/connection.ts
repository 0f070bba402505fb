/**
 * The fleet's NATS connection, made on first use (the client packages load then, so a daemon without a fleet
 * never imports them) and kept reconnecting for as long as the extension runs. Credentials are read from
 * where settings `fleet.credentials` point (an environment variable, an nkey seed file) at each connect,
 * never logged. Uses the official modular clients: `@nats-io/transport-node` (the connection),
 * `@nats-io/kv` (placements); `@nats-io/jetstream` for streams.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { ExtensionEnv, FleetSettings, Logger } from '@agt/contracts';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { ConnectionOptions, NatsConnection } from '@nats-io/transport-node';
import { fleetUnreachable } from './errors.js';

/** How long a caller waits for the first connection before its request answers 503. */
export const CONNECT_WAIT_MS = 8_000;

export interface FleetLink {
  nc: NatsConnection;
  /** The placement bucket: one record per agent, its TTL the extension's `ttlSeconds`. */
  placements: KV;
  /** One record per drained daemon (`POST /fleet/drain`), kept until `POST /fleet/undrain`: no TTL. */
  daemons: KV;
  js: JetStreamClient;
  /** The fleet's event stream (every daemon's events), made if missing. */
  eventStream: string;
}

/** How long the fleet's event stream keeps an event. */
export const EVENTS_MAX_AGE_MS = 24 * 3600_000;
/** Within this window a re-published event (same message id) is dropped by JetStream. */
export const EVENTS_DUPLICATE_WINDOW_MS = 2 * 60_000;

/** The connection options for `settings`: servers, the credentials they name, endless reconnects. */
export function connectionOptions(settings: FleetSettings, env: ExtensionEnv, daemon: string): ConnectionOptions {
  const options: ConnectionOptions = {
    servers: [...settings.servers],
    name: `agt:${settings.name}:${daemon}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    // A dead server is noticed within a few seconds, well inside the placement's TTL.
    pingInterval: 2_000,
    maxPingOut: 2,
  };
  const credentials = settings.credentials ?? {};
  if (credentials.user !== undefined) {
    options.user = credentials.user;
    const password = credentials.passwordEnv ? env.get(credentials.passwordEnv) : undefined;
    if (credentials.passwordEnv && password === undefined)
      throw fleetUnreachable(`the environment variable ${credentials.passwordEnv} (the NATS password) is not set`);
    if (password !== undefined) options.pass = password;
  }
  if (credentials.tokenEnv) {
    const token = env.get(credentials.tokenEnv);
    if (token === undefined)
      throw fleetUnreachable(`the environment variable ${credentials.tokenEnv} (the NATS token) is not set`);
    options.token = token;
  }
  return options;
}

/** The bytes of the nkey seed file, checked to be an absolute path that reads. */
function readSeed(path: string): Uint8Array {
  if (!isAbsolute(path)) throw fleetUnreachable('settings fleet.credentials.nkeySeedFile must be an absolute path');
  try {
    return new TextEncoder().encode(readFileSync(path, 'utf8').trim());
  } catch (error) {
    throw fleetUnreachable(`the nkey seed file cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** Connects (once; later calls share the attempt) and opens the placement bucket. */
export class FleetConnection {
  private link: Promise<FleetLink> | undefined;
  private closed = false;
  /** The last connection problem, for `problem()` and `GET /fleet` (never a secret). */
  lastError: string | null = null;
  connected = false;

  constructor(
    private readonly settings: FleetSettings,
    private readonly env: ExtensionEnv,
    private readonly logger: Logger,
    private readonly daemon: string,
    private readonly ttlMs: number,
    private readonly replicas = 1,
  ) {}

  /** The link, connecting on first use; rejects 503 when no connection came within {@link CONNECT_WAIT_MS}. */
  async get(wait = CONNECT_WAIT_MS): Promise<FleetLink> {
    if (this.closed) throw fleetUnreachable('the fleet extension is stopping');
    this.link ??= this.open();
    const link = this.link;
    if (!Number.isFinite(wait)) return link;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        link,
        new Promise<never>((_, fail) => {
          timer = setTimeout(() => fail(fleetUnreachable(this.lastError ?? `no answer within ${wait} ms`)), wait);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async open(): Promise<FleetLink> {
    const [{ connect, nanos }, { Kvm }, { jetstream, jetstreamManager }] = await Promise.all([
      import('@nats-io/transport-node'),
      import('@nats-io/kv'),
      import('@nats-io/jetstream'),
    ]);
    const options = connectionOptions(this.settings, this.env, this.daemon);
    const seedFile = this.settings.credentials?.nkeySeedFile;
    if (seedFile) {
      const { nkeyAuthenticator } = await import('@nats-io/transport-node');
      options.authenticator = nkeyAuthenticator(() => readSeed(seedFile));
    }
    let nc: NatsConnection;
    try {
      nc = await connect(options);
    } catch (error) {
      this.lastError = describe(error);
      this.link = undefined;
      throw fleetUnreachable(this.lastError);
    }
    void this.follow(nc);
    try {
      const placements = await new Kvm(nc).create(`agt_fleet_${this.settings.name}_placements`, {
        ttl: this.ttlMs,
        history: 1,
        replicas: this.replicas,
      });
      const daemons = await new Kvm(nc).create(`agt_fleet_${this.settings.name}_daemons`, {
        history: 1,
        replicas: this.replicas,
      });
      const eventStream = `agt_fleet_${this.settings.name}_events`;
      const jsm = await jetstreamManager(nc);
      const exists = await jsm.streams.info(eventStream).then(
        () => true,
        () => false,
      );
      if (!exists)
        await jsm.streams
          .add({
            name: eventStream,
            subjects: [`agt.fleet.${this.settings.name}.events.>`],
            max_age: nanos(EVENTS_MAX_AGE_MS),
            duplicate_window: nanos(EVENTS_DUPLICATE_WINDOW_MS),
            num_replicas: this.replicas,
          })
          .catch(async (error: unknown) => {
            // Another daemon made it meanwhile.
            if (
              !(await jsm.streams.info(eventStream).then(
                () => true,
                () => false,
              ))
            )
              throw error;
          });
      // Connected for `GET /fleet` once the bucket and the stream are there too.
      this.connected = true;
      this.lastError = null;
      return { nc, placements, daemons, js: jetstream(nc), eventStream };
    } catch (error) {
      this.lastError = describe(error);
      this.link = undefined;
      await nc.close().catch(() => {});
      throw fleetUnreachable(this.lastError);
    }
  }

  /** Tracks the connection's state for `GET /fleet` and the logs. */
  private async follow(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') {
        this.connected = false;
        this.logger.warn({ server: status.server }, 'fleet: NATS connection lost; reconnecting');
      } else if (status.type === 'reconnect') {
        this.connected = true;
        this.lastError = null;
        this.logger.info({ server: status.server }, 'fleet: NATS connection back');
      } else if (status.type === 'error') {
        this.lastError = describe(status.error);
      }
    }
    this.connected = false;
  }

  async close(): Promise<void> {
    this.closed = true;
    const link = this.link;
    this.link = undefined;
    if (!link) return;
    const settled = await link.catch(() => undefined);
    if (settled) await settled.nc.close().catch(() => {});
  }
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.slice(0, 300);
}
