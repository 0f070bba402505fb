/**
 * The mesh server's life: on while `meshServerEnabled` is not false; port from `MESH_PORT`,
 * else `meshPort`, else 7295; host from `MESH_HOST`, else all interfaces when `meshLan` is on or a loaded
 * agent's visibility is `lan` or `public`, else 127.0.0.1. `reconcile()` (after a settings change, an
 * agent load, unload or config change) closes and re-listens only when the wanted address changed; calls
 * run one after another. Each listen prints `agt mesh listening on http://HOST:PORT`.
 * Public names (manifest `publicNames`, `MESH_PUBLIC_NAMES`) are what the Host guard accepts besides the
 * bound addresses, and the first one is the server's base URL on cards (else the bound address).
 */
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { ExtensionContext } from '@agt/contracts';
import { visibilityOf } from './scope.js';

export const DEFAULT_MESH_PORT = 7295;
/** A Host-shaped name: `name`, `name:port`, `[v6]`, `[v6]:port`. */
const PUBLIC_NAME = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$/;

/** This machine's first non-internal IPv4 address (what other machines reach), if any. */
export function lanAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const item of list ?? []) if (item.family === 'IPv4' && !item.internal) return item.address;
  }
  return undefined;
}

export interface Wanted {
  enabled: boolean;
  host: string;
  port: number;
  lan: boolean;
}

export interface MeshStatus extends Wanted {
  running: boolean;
  /** The bound port while running (the wanted one may be 0). */
  boundPort: number | null;
  url: string | null;
  error: string | null;
}

export class MeshServer {
  private app: FastifyInstance | undefined;
  private bound: { host: string; port: number; wantedPort: number } | undefined;
  private chain: Promise<void> = Promise.resolve();
  private lastError: string | null = null;
  private stopped = false;
  private readonly listeners = new Set<(status: MeshStatus) => void>();

  constructor(
    private readonly ctx: Pick<ExtensionContext, 'settings' | 'agents' | 'env' | 'logger' | 'print'>,
    private readonly build: () => FastifyInstance,
    private readonly configuredNames: readonly string[] = [],
  ) {}

  /** The names the server is reached by from elsewhere: the manifest's, then `MESH_PUBLIC_NAMES` (comma-separated). */
  publicNames(): string[] {
    const fromEnv = (this.ctx.env.get('MESH_PUBLIC_NAMES') ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => PUBLIC_NAME.test(name));
    return [...new Set([...this.configuredNames, ...fromEnv])];
  }

  /** The server's own base URL, never the caller's Host: the first public name, else the bound address. */
  baseUrl(): string {
    const name = this.publicNames()[0];
    return name !== undefined ? `http://${name.toLowerCase()}` : (this.status().url ?? '');
  }

  wanted(): Wanted {
    const settings = this.ctx.settings.current();
    const envPort = Number.parseInt(this.ctx.env.get('MESH_PORT') ?? '', 10);
    const port =
      Number.isInteger(envPort) && envPort >= 0 && envPort <= 65535
        ? envPort
        : (settings.meshPort ?? DEFAULT_MESH_PORT);
    const lan = settings.meshLan === true;
    const wide = lan || this.ctx.agents.list().some((agent) => ['lan', 'public'].includes(visibilityOf(agent)));
    const host = this.ctx.env.get('MESH_HOST') || (wide ? '0.0.0.0' : '127.0.0.1');
    return { enabled: settings.meshServerEnabled !== false, host, port, lan };
  }

  status(): MeshStatus {
    const wanted = this.wanted();
    const running = this.app !== undefined && this.bound !== undefined;
    const host = this.bound?.host ?? wanted.host;
    const urlHost =
      host === '0.0.0.0' || host === '::' ? (lanAddress() ?? '127.0.0.1') : host.includes(':') ? `[${host}]` : host;
    return {
      ...wanted,
      running,
      host,
      boundPort: this.bound?.port ?? null,
      url: running ? `http://${urlHost}:${this.bound!.port}` : null,
      error: this.lastError,
    };
  }

  /** Called after every (re)listen or close. */
  onChange(listener: (status: MeshStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Brings the server to the wanted state; resolves when it is there (errors are kept in `status().error`). */
  reconcile(): Promise<void> {
    this.chain = this.chain
      .then(() => this.apply())
      .catch((error: unknown) => {
        this.ctx.logger.error({ err: error }, 'mesh server reconcile failed');
      });
    return this.chain;
  }

  private async apply(): Promise<void> {
    if (this.stopped) return;
    const wanted = this.wanted();
    if (this.bound && wanted.enabled && this.bound.host === wanted.host && this.bound.wantedPort === wanted.port)
      return;
    const previousPort = this.bound?.port;
    await this.close();
    if (!wanted.enabled) {
      this.lastError = null;
      this.announce();
      return;
    }
    const app = this.build();
    // Port 0 keeps the port it was given while it can, so URLs handed out stay valid across a rebind.
    const ports = wanted.port === 0 && previousPort ? [previousPort, 0] : [wanted.port];
    for (const port of ports) {
      try {
        await app.listen({ host: wanted.host, port });
        const actual = (app.server.address() as AddressInfo).port;
        this.app = app;
        this.bound = { host: wanted.host, port: actual, wantedPort: wanted.port };
        this.lastError = null;
        this.ctx.print(
          `agt mesh listening on http://${wanted.host.includes(':') ? `[${wanted.host}]` : wanted.host}:${actual}`,
        );
        this.announce();
        return;
      } catch (error) {
        this.lastError = `cannot listen on ${wanted.host}:${port}: ${this.why(error)}`;
      }
    }
    this.ctx.logger.error({ host: wanted.host, port: wanted.port }, this.lastError ?? 'mesh server did not start');
    await app.close().catch(() => {});
    this.announce();
  }

  /** Why a listen failed, and what moves the server: the variable or setting its address came from. */
  private why(error: unknown): string {
    const code = (error as NodeJS.ErrnoException).code;
    const fromEnv = this.ctx.env.get('MESH_PORT') !== undefined && this.ctx.env.get('MESH_PORT') !== '';
    const moves = fromEnv ? 'set MESH_PORT to another port' : 'set MESH_PORT (or the setting meshPort) to another port';
    const off = 'or turn the mesh off (POST /network/mesh/disable)';
    if (code === 'EADDRINUSE')
      return `the port is in use by another process (EADDRINUSE): ${moves}, ${off}; the daemon runs on without a mesh`;
    if (code === 'EACCES') return `no permission to listen there (EACCES): ${moves} (above 1023), ${off}`;
    if (code === 'EADDRNOTAVAIL')
      return `this machine has no address ${this.wanted().host} (EADDRNOTAVAIL): fix MESH_HOST, ${off}`;
    return `${(error as Error).message}: ${moves}, ${off}`;
  }

  /** What the owner should know while the wanted server is not running (ExtensionHooks.problem). */
  problem(): string | null {
    const status = this.status();
    if (!status.enabled || status.running || !this.lastError) return null;
    return `mesh server down: ${this.lastError}`;
  }

  private async close(): Promise<void> {
    const app = this.app;
    this.app = undefined;
    this.bound = undefined;
    if (app)
      await app
        .close()
        .catch((error: unknown) => this.ctx.logger.warn({ err: error }, 'closing the mesh server failed'));
  }

  private announce(): void {
    const status = this.status();
    for (const listener of this.listeners) {
      try {
        listener(status);
      } catch (error) {
        this.ctx.logger.warn({ err: error }, 'mesh status listener failed');
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.chain;
    await this.close();
    this.listeners.clear();
  }
}
