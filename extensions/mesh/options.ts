/** The mesh extension's manifest `config` (all optional; the defaults suit a daemon on a desk). */
import { Type, type Static } from 'typebox';

export const MeshOptions = Type.Object(
  {
    /** Largest request body the mesh server reads (an inbox envelope, an API call), bytes. */
    maxBodyBytes: Type.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024, default: 256 * 1024 }),
    /** Messages one sender (DID) may deliver to one agent per `rateWindowMs`. */
    rateLimit: Type.Integer({ minimum: 1, maximum: 100_000, default: 30 }),
    rateWindowMs: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 60_000 }),
    /** Messages one agent's inbox accepts per `rateWindowMs` from all senders together. */
    inboxRateLimit: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 120 }),
    /**
     * Inbox posts per `rateWindowMs` from one requester address (an IPv6 address counts in its /64), before any
     * signature work.
     */
    addressRateLimit: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 300 }),
    /**
     * Rate windows each limit keeps at most; past it, new senders or addresses share one overflow window (a running
     * window is never dropped).
     */
    rateMaxKeys: Type.Integer({ minimum: 100, maximum: 1_000_000, default: 10_000 }),
    /** Outbound retries: first pause, cap of a pause, tries in all (network errors and 5xx). */
    retryBaseMs: Type.Integer({ minimum: 1, maximum: 600_000, default: 1_000 }),
    retryMaxMs: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 60_000 }),
    maxAttempts: Type.Integer({ minimum: 1, maximum: 1_000, default: 12 }),
    /**
     * How long a blocking A2A send (`SendMessage`, `message/send` with `blocking`) waits for its task to end or ask for
     * input before answering with it as it is.
     */
    a2aWaitMs: Type.Integer({ minimum: 1_000, maximum: 600_000, default: 300_000 }),
    /** Time limit of one outbound HTTP try. */
    requestTimeoutMs: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
    /** Time limit of an agent website API route's lambda (capped by the agent's `limits.lambda_timeout_ms`). */
    apiTimeoutMs: Type.Integer({ minimum: 10, maximum: 60_000, default: 5_000 }),
    /**
     * Names other machines reach the mesh server by (a DNS name, a NAT's public address), `name` or
     * `name:port`; the Host guard accepts them (with `MESH_PUBLIC_NAMES`, comma-separated) besides
     * localhost, the bound addresses and the mDNS name, and the first one is the base of card URLs.
     */
    publicNames: Type.Array(
      Type.String({ pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$', maxLength: 260 }),
      { maxItems: 32, default: [] },
    ),
    /**
     * The mesh server's header and request time limits (default the main API's: 10 s and 60 s; 408 past
     * them) and its connection budget (default settings `server.maxConnections` and
     * `server.maxConnectionsPerAddress`, else the kernel's defaults: docs/security.md, "Connection limits").
     */
    serverLimits: Type.Object(
      {
        headersTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 60_000 })),
        requestTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
        maxConnections: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
        maxConnectionsPerAddress: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
      },
      { default: {}, additionalProperties: false },
    ),
    /**
     * mDNS: the interface multicast goes out on and the bind address (bonjour-service options); default the system's.
     */
    mdns: Type.Object(
      {
        enabled: Type.Boolean({ default: true }),
        interface: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        bind: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        /** Announce even when the server is bound to loopback only (tests on one machine). */
        announceOnLoopback: Type.Boolean({ default: false }),
      },
      { default: {}, additionalProperties: false },
    ),
  },
  { additionalProperties: false, default: {} },
);

export type MeshOptions = Static<typeof MeshOptions>;
