/**
 * Other daemons' mesh servers: manual peers from settings (`meshPeers`) and the ones mDNS finds
 * (`_agt-mesh._tcp`, bonjour-service). The service is announced only while the server listens on all
 * interfaces (or when the manifest asks for loopback announcing, for tests on one machine); the browser
 * runs while the server runs. The endpoint travels in the TXT record (`url`): `service.addresses` lists
 * every address of the other host, not the one it listens on.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '@agt/contracts';
import type { SettingsService } from '@agt/contracts';
import type { MeshOptions } from './options.js';
import type { MeshStatus } from './mesh-server.js';

export const SERVICE_TYPE = 'agt-mesh';

export interface Peer {
  name: string;
  url: string;
  source: 'mdns' | 'manual';
  /** Epoch ms when last seen (mDNS); null for manual peers. */
  seenAt: number | null;
}

type BonjourLike = {
  publish(config: { name: string; type: string; port: number; txt?: Record<string, string> }): {
    stop?: CallableFunction;
  };
  find(config: { type: string }): {
    on(event: string, listener: (service: any) => void): void;
    stop(): void;
    services: any[];
  };
  unpublishAll(callback?: CallableFunction): void;
  destroy(callback?: CallableFunction): void;
};

export class PeerDirectory {
  /** This process's instance name: its own announcement is not a peer. */
  readonly instance = `agt-${randomBytes(4).toString('hex')}`;
  private bonjour: BonjourLike | undefined;
  private browser: ReturnType<BonjourLike['find']> | undefined;
  private published: string | null = null;
  private readonly seen = new Map<string, Peer>();
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly settings: SettingsService,
    private readonly options: MeshOptions['mdns'],
    private readonly logger: Logger,
  ) {}

  list(): Peer[] {
    const manual = (this.settings.current().meshPeers ?? []).map(
      (url): Peer => ({ name: url, url: url.replace(/\/$/, ''), source: 'manual', seenAt: null }),
    );
    return [...manual, ...this.seen.values()];
  }

  /** Base URLs of every peer, manual first. */
  urls(): string[] {
    return [...new Set(this.list().map((peer) => peer.url))];
  }

  /** Follows the mesh server: browse while it runs, announce while it is on all interfaces. */
  follow(status: MeshStatus): Promise<void> {
    this.chain = this.chain
      .then(() => this.apply(status))
      .catch((error: unknown) => this.logger.warn({ err: error }, 'mDNS update failed'));
    return this.chain;
  }

  private async apply(status: MeshStatus): Promise<void> {
    if (!this.options.enabled || !status.running || !status.url) {
      await this.close();
      return;
    }
    const wide = status.host === '0.0.0.0' || status.host === '::';
    const announce = wide || this.options.announceOnLoopback;
    const url = status.url;
    if (this.bonjour && this.published === (announce ? url : null)) return;
    await this.close();
    type BonjourClass = new (opts?: object, onError?: (error: unknown) => void) => BonjourLike;
    const loaded = (await import('bonjour-service')) as unknown as {
      default?: BonjourClass & { Bonjour?: BonjourClass };
      Bonjour?: BonjourClass;
    };
    const Bonjour = (loaded.default?.Bonjour ?? loaded.Bonjour ?? loaded.default)!;
    const options = {
      ...(this.options.interface ? { interface: this.options.interface } : {}),
      ...(this.options.bind ? { bind: this.options.bind } : {}),
    };
    const bonjour = new Bonjour(options, (error: unknown) => this.logger.warn({ err: error }, 'mDNS socket error'));
    this.bonjour = bonjour;
    if (announce) {
      bonjour.publish({ name: this.instance, type: SERVICE_TYPE, port: status.boundPort!, txt: { url, v: '1' } });
      this.published = url;
    } else {
      this.published = null;
    }
    const browser = bonjour.find({ type: SERVICE_TYPE });
    browser.on('up', (service) => this.up(service));
    browser.on('txt-update', (service) => this.up(service));
    browser.on('down', (service) => this.seen.delete(String(service?.name)));
    this.browser = browser;
  }

  private up(service: any): void {
    const name = String(service?.name ?? '');
    const url = typeof service?.txt?.url === 'string' ? service.txt.url : undefined;
    if (!name || name === this.instance || !url || !/^https?:\/\/[^\s/?#]+$/.test(url)) return;
    this.seen.set(name, { name, url, source: 'mdns', seenAt: Date.now() });
    if (this.seen.size > 1000) this.seen.delete(this.seen.keys().next().value!);
  }

  private async close(): Promise<void> {
    const bonjour = this.bonjour;
    this.bonjour = undefined;
    this.published = null;
    this.browser?.stop();
    this.browser = undefined;
    this.seen.clear();
    if (!bonjour) return;
    await new Promise<void>((done) => {
      const timer = setTimeout(done, 1_000);
      bonjour.unpublishAll(() =>
        bonjour.destroy(() => {
          clearTimeout(timer);
          done();
        }),
      );
    });
  }

  stop(): Promise<void> {
    this.chain = this.chain.then(() => this.close());
    return this.chain;
  }
}
