/**
 * The Docker engine, through dockerode (imported on first use, so a daemon that never computes does not
 * load it). Every call goes through {@link Engine.call}: an engine that does not answer becomes 503
 * `unavailable`, one that answers with an error becomes 404 / 409 / 502 with its message, so no route
 * or tool ever shows a raw socket error.
 */
import { request } from 'node:http';
import type Docker from 'dockerode';
import { AgtError } from '@agt/contracts';
import { engineFailed, engineUnreachable } from './errors.js';

export interface EngineAddress {
  /** What messages and `GET /compute` show: `unix:///var/run/docker.sock`, `tcp://10.0.0.2:2375`. */
  label: string;
  options: Docker.DockerOptions;
}

const DEFAULT_SOCKET = '/var/run/docker.sock';

/**
 * The engine's address from the option, else `DOCKER_HOST`, else the local socket; `bad_request` for a form it cannot
 * use.
 */
export function engineAddress(configured: string | undefined): EngineAddress {
  const value = configured ?? `unix://${DEFAULT_SOCKET}`;
  if (value.startsWith('unix://')) {
    const socketPath = value.slice('unix://'.length);
    if (!socketPath.startsWith('/'))
      throw new AgtError('bad_request', `DOCKER_HOST ${value}: a unix socket needs an absolute path`);
    return { label: value, options: { socketPath } };
  }
  const match = /^(?:tcp|http):\/\/([^/:]+|\[[^\]]+\]):(\d{1,5})\/?$/.exec(value);
  if (match)
    return {
      label: value,
      options: { host: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2]), protocol: 'http' },
    };
  throw new AgtError(
    'bad_request',
    `DOCKER_HOST ${value}: use unix:///path or tcp://host:port (TLS engines are not supported)`,
  );
}

/** A connection-level failure (nothing answered), as opposed to an answer with an error status. */
function unreachable(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    /^(ECONNREFUSED|ENOENT|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|EACCES|EPIPE|ENOTFOUND|EAI_AGAIN)$/.test(code)
  )
    return code;
  if (
    error instanceof Error &&
    /timeout/i.test(error.message) &&
    (error as { statusCode?: unknown }).statusCode === undefined
  )
    return 'no answer in time';
  return undefined;
}

export class Engine {
  private control?: Docker;
  private streams?: Docker;

  constructor(
    readonly address: EngineAddress,
    private readonly timeoutMs: number,
  ) {}

  /**
   * The client for short calls (with the engine time limit) and the one for exec streams (without: an exec runs as long
   * as its own limit).
   */
  private async clients(): Promise<{ control: Docker; streams: Docker }> {
    if (!this.control || !this.streams) {
      // dockerode (with ssh2 and its crypto) costs ~28 MB and a large share of the daemon's start when
      // loaded: an engine that is not there is found out with one plain request instead.
      await this.ping();
      const { default: DockerClient } = await import('dockerode');
      this.control = new DockerClient({ ...this.address.options, timeout: this.timeoutMs });
      this.streams = new DockerClient(this.address.options);
    }
    return { control: this.control, streams: this.streams };
  }

  /** Resolves once the engine answers `GET /_ping` at all; rejects `unavailable` when nothing answers. */
  private ping(): Promise<void> {
    const { socketPath, host, port } = this.address.options as { socketPath?: string; host?: string; port?: number };
    return new Promise((done, fail) => {
      const req = request({ socketPath, host, port, path: '/_ping', method: 'GET', timeout: this.timeoutMs }, (res) => {
        res.resume();
        done();
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (error) => fail(this.translate('answer', error)));
      req.end();
    });
  }

  /** Runs `fn` against the engine and turns its failures into coded errors (`what` names the action). */
  async call<T>(what: string, fn: (docker: Docker) => Promise<T>, options: { stream?: boolean } = {}): Promise<T> {
    const clients = await this.clients();
    try {
      return await fn(options.stream ? clients.streams : clients.control);
    } catch (error) {
      throw this.translate(what, error);
    }
  }

  /** The coded error for an engine failure. */
  translate(what: string, error: unknown): Error {
    if (error instanceof AgtError) return error;
    const cut = unreachable(error);
    if (cut) return engineUnreachable(this.address.label, cut);
    const status = (error as { statusCode?: unknown }).statusCode;
    const json = (error as { json?: { message?: unknown } }).json;
    const reason =
      typeof json?.message === 'string' ? json.message : error instanceof Error ? error.message : String(error);
    if (status === 404) return new AgtError('not_found', `the Docker engine could not ${what}: ${reason}`);
    if (status === 409) return new AgtError('conflict', `the Docker engine could not ${what}: ${reason}`);
    return engineFailed(what, typeof status === 'number' ? status : undefined, reason);
  }

  /** The engine's version; rejects `unavailable` when it does not answer. */
  async version(): Promise<string> {
    const info = await this.call('tell its version', (docker) => docker.version());
    return String(info.Version);
  }

  /** Frees the clients' sockets. */
  close(): void {
    for (const client of [this.control, this.streams]) {
      const agent = (client as unknown as { modem?: { agent?: { destroy?: () => void } } } | undefined)?.modem?.agent;
      agent?.destroy?.();
    }
    this.control = this.streams = undefined;
  }
}

/** True for the coded error of a missing engine object (a container deleted behind our back). */
export const isNotFound = (error: unknown) => error instanceof AgtError && error.code === 'not_found';
