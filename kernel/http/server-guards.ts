/**
 * `ctx.serverGuards` (contracts/server-guards.ts): servers an extension opens get the main API's
 * guards from the same functions the main API runs: `checkSite` (Host, absolute-form authority,
 * Origin, Sec-Fetch-Site), `serverLimitOptions` (header size, header/request/idle time limits and the
 * `{error, code}` answer to errors before routing), `installInputChecks` (JSON depth, decimal
 * numbers) and `installConnectionCaps` (a connection budget of the server's own, settings `server.*`).
 * What differs is only the policy: the addresses the server is really bound to (read from its socket,
 * so a rebind is followed), the machine's mDNS name and the extension's public names.
 */
import type { AddressInfo } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { AgtError, ServerGuardPolicy, ServerGuards, ServerLimits } from '@agt/contracts';
import { compileValidator } from './validators.js';
import { routerRefusal } from './errors.js';
import { checkSite, type SiteGuardOptions } from './guards.js';
import { installInputChecks } from './input-checks.js';
import { REQUEST_LIMITS, serverLimitOptions, type RequestLimits } from './limits.js';
import { installConnectionCaps, resolveCaps, type ConnectionCaps } from './connection-caps.js';

const WILDCARDS = new Set(['0.0.0.0', '::', '::0', '0:0:0:0:0:0:0:0']);

// The machine's addresses change rarely and a wildcard-bound server asks on every request.
let interfaceCache: { at: number; addresses: string[] } | undefined;
const INTERFACE_CACHE_MS = 2_000;

/** Every address of this machine's interfaces (loopback included). */
export function machineAddresses(now = Date.now()): string[] {
  if (interfaceCache === undefined || now - interfaceCache.at > INTERFACE_CACHE_MS) {
    const addresses = Object.values(networkInterfaces()).flatMap((list) =>
      (list ?? []).map((item) => item.address.replace(/%.*$/, '')),
    );
    interfaceCache = { at: now, addresses };
  }
  return interfaceCache.addresses;
}

/** This machine's mDNS name: the host name's first label plus `.local`. */
export function mdnsHostName(): string {
  const label = hostname().toLowerCase().replace(/\.$/, '').split('.')[0] ?? '';
  return /^[a-z0-9-]{1,63}$/.test(label) ? `${label}.local` : '';
}

/**
 * The site policy of a server from where it is bound: its port, and its address (every address of the
 * machine for a wildcard bind), read from its socket on each request; names: the public names and the
 * mDNS name.
 */
export function boundSitePolicy(app: FastifyInstance, policy: ServerGuardPolicy): SiteGuardOptions {
  const address = () => {
    const bound = app.server.address();
    return bound !== null && typeof bound === 'object' ? (bound as AddressInfo) : undefined;
  };
  const mdns = policy.mdnsName === false ? '' : mdnsHostName();
  const publicNames = policy.publicNames;
  return {
    boundPort: () => address()?.port ?? 0,
    get allowedHosts() {
      const names = typeof publicNames === 'function' ? publicNames() : (publicNames ?? []);
      return mdns ? [...names, mdns] : names;
    },
    boundAddresses: () => {
      const bound = address()?.address;
      if (bound === undefined) return [];
      return WILDCARDS.has(bound) ? machineAddresses() : [bound];
    },
    crossSiteNavigation: policy.crossSiteNavigation === true,
  };
}

function requestLimits(overrides: Partial<ServerLimits> | undefined): RequestLimits {
  const limits = { ...REQUEST_LIMITS };
  for (const key of [
    'maxHeaderBytes',
    'headersTimeoutMs',
    'requestTimeoutMs',
    'keepAliveTimeoutMs',
    'idleSocketTimeoutMs',
  ] as const) {
    const value = overrides?.[key];
    if (value !== undefined) {
      if (!Number.isInteger(value) || value <= 0)
        throw new TypeError(`serverGuards: limits.${key} must be a positive integer (got ${String(value)})`);
      limits[key] = value;
    }
  }
  // Deadlines are checked this often: a tenth of the shortest one, at most once a second.
  limits.checkIntervalMs = Math.max(
    10,
    Math.min(
      REQUEST_LIMITS.checkIntervalMs,
      Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 10),
    ),
  );
  return limits;
}

/** The policy's own connection caps, checked (the rest comes from settings or the defaults). */
function policyCaps(overrides: Partial<ServerLimits> | undefined): Partial<ConnectionCaps> {
  const caps: Partial<ConnectionCaps> = {};
  for (const key of ['maxConnections', 'maxConnectionsPerAddress'] as const) {
    const value = overrides?.[key];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value <= 0)
      throw new TypeError(`serverGuards: limits.${key} must be a positive integer (got ${String(value)})`);
    caps[key] = value;
  }
  return caps;
}

/** Where the daemon's settings give connection caps (`server.*`); read on every connection. */
export type SettingsCaps = () => Partial<ConnectionCaps> | undefined;

/**
 * Builds a guarded server (the implementation of `ctx.serverGuards.createServer`). Its connection budget
 * is its own: the policy's caps, else the settings', else the defaults (connection-caps.ts).
 */
export function createGuardedServer(
  options: FastifyServerOptions = {},
  policy: ServerGuardPolicy = {},
  settingsCaps: SettingsCaps = () => undefined,
): FastifyInstance {
  const limits = requestLimits(policy.limits);
  const ownCaps = policyCaps(policy.limits);
  let site: SiteGuardOptions | undefined;
  const app: FastifyInstance = Fastify({
    ...options,
    // As on the main API: an error the router raises before any hook still passes the site guard first.
    frameworkErrors: (error, request, reply) => {
      let refusal: AgtError;
      try {
        checkSite(request as FastifyRequest, site!);
        refusal = routerRefusal(error.message);
      } catch (guardError) {
        refusal = guardError as AgtError;
      }
      void (reply as import('fastify').FastifyReply).status(refusal.statusCode).send(refusal.toBody());
    },
    ...serverLimitOptions(limits),
  }) as unknown as FastifyInstance;
  // The main API's validators: a body member the schema does not name is refused, never silently
  // dropped (fastify's default Ajv strips it, so a signed envelope could carry unsigned extras).
  app.setValidatorCompiler(compileValidator);
  const guard = boundSitePolicy(app, policy);
  site = guard;
  // The refusal is answered here, not thrown to the extension's error handler: its shape cannot drift.
  app.addHook('onRequest', (request, reply, done) => {
    try {
      checkSite(request, guard);
    } catch (error) {
      const refusal = error as AgtError;
      void reply.status(refusal.statusCode).send(refusal.toBody());
      return;
    }
    done();
  });
  installInputChecks(app);
  installConnectionCaps(app.server, () => resolveCaps(ownCaps, settingsCaps()));
  return app;
}

/**
 * The object every extension context carries; `settingsCaps` reads the daemon's settings `server.*`
 * (without it, as in `@agt/contracts/testing`, the defaults apply).
 */
export function createServerGuards(settingsCaps: SettingsCaps = () => undefined): ServerGuards {
  return Object.freeze({
    createServer: (options?: FastifyServerOptions, policy?: ServerGuardPolicy) =>
      createGuardedServer(options, policy, settingsCaps),
    get defaultLimits(): Readonly<ServerLimits> {
      return Object.freeze({
        maxHeaderBytes: REQUEST_LIMITS.maxHeaderBytes,
        headersTimeoutMs: REQUEST_LIMITS.headersTimeoutMs,
        requestTimeoutMs: REQUEST_LIMITS.requestTimeoutMs,
        keepAliveTimeoutMs: REQUEST_LIMITS.keepAliveTimeoutMs,
        idleSocketTimeoutMs: REQUEST_LIMITS.idleSocketTimeoutMs,
        ...resolveCaps(settingsCaps()),
      });
    },
  });
}

/** The guards with the default connection caps (no daemon settings to read). */
export const serverGuards: ServerGuards = createServerGuards();
