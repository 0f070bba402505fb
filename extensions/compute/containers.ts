/**
 * This daemon's containers on the engine: the shared one (every agent of the `shared` tier, each in its
 * own work dir as its own user) and one per agent of the `isolated` tier. A container is created on
 * first use, started again when something stopped it, and created again when something removed it.
 *
 * Every container is hardened the same way: the network only when the agent is granted it (isolated
 * only; the shared one never has any), memory (no swap beyond it), CPU and pid limits, every capability
 * dropped, no-new-privileges, a read-only root with a writable `/work` volume and an in-memory `/tmp`,
 * and a non-root user. Work dirs are made by a one-shot container that holds only CAP_CHOWN and runs a
 * fixed script, since the containers themselves cannot chown.
 */
import type Docker from 'dockerode';
import type { Logger } from '@agt/contracts';
import type { Engine } from './engine.js';
import { isNotFound } from './engine.js';
import { containerNotFound, imageMissing } from './errors.js';
import { imagePresent } from './image.js';
import {
  isolatedName,
  LABEL_AGENT,
  LABEL_DAEMON,
  LABEL_TIER,
  sharedName,
  volumeOf,
  workDirOf,
  type ContainerTier,
} from './labels.js';
import type { ComputeOptions } from './options.js';

/** What `GET /compute` and `GET /compute/containers/{name}` show of a container. */
export interface ContainerInfo {
  name: string;
  id: string;
  tier: ContainerTier;
  agentId: string | null;
  state: string;
  running: boolean;
  image: string;
  network: boolean;
  created_at: number;
}

export interface ContainerWanted {
  tier: ContainerTier;
  agentId: string;
  network: boolean;
}

/** PID 1: waits, and ends at once on the stop signal (a plain shell would ignore SIGTERM as PID 1). */
const IDLE = ['/bin/sh', '-c', 'trap "exit 0" TERM INT; while :; do sleep 3600 & wait $!; done'];
const MIB = 1024 * 1024;
/** Seconds a stop waits before the engine kills. */
const STOP_GRACE_S = 2;

/** The engine's 304 to stopping a stopped container. */
const isNotModified = (error: unknown) =>
  (error as { details?: { engineStatus?: unknown } }).details?.engineStatus === 304;

const nameOf = (info: Docker.ContainerInfo) => (info.Names[0] ?? '').replace(/^\//, '');

export class Containers {
  /** Containers this daemon run started (or found running at boot): shutdown stops them. */
  private readonly started = new Set<string>();
  /** Ensures under way, by name, so concurrent execs create a container once. */
  private readonly pending = new Map<string, Promise<string>>();
  /** Work dirs known to exist with the right owner: `<volume>:<dir>`. */
  private readonly prepared = new Set<string>();

  constructor(
    private readonly engine: Engine,
    private readonly daemonKey: string,
    private readonly options: ComputeOptions,
    private readonly logger: Logger,
  ) {}

  nameFor(wanted: Pick<ContainerWanted, 'tier' | 'agentId'>): string {
    return wanted.tier === 'shared' ? sharedName(this.daemonKey) : isolatedName(this.daemonKey, wanted.agentId);
  }

  /** This daemon's containers (running or not), found by label. */
  async list(): Promise<ContainerInfo[]> {
    const found = await this.engine.call('list containers', (docker) =>
      docker.listContainers({ all: true, filters: { label: [`${LABEL_DAEMON}=${this.daemonKey}`] } }),
    );
    return found
      .filter((info) => info.Labels?.[LABEL_TIER] !== 'helper')
      .map((info) => this.describe(info))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** One of this daemon's containers by name; `not_found` for any other. */
  async get(name: string): Promise<ContainerInfo> {
    const own = (await this.list()).find((info) => info.name === name);
    if (!own) throw containerNotFound(name);
    return own;
  }

  private describe(info: Docker.ContainerInfo): ContainerInfo {
    const labels = info.Labels ?? {};
    return {
      name: nameOf(info),
      id: info.Id,
      tier: labels[LABEL_TIER] === 'isolated' ? 'isolated' : 'shared',
      agentId: labels[LABEL_AGENT] ?? null,
      state: info.State,
      running: info.State === 'running',
      image: info.Image,
      network: info.HostConfig?.NetworkMode !== 'none',
      created_at: info.Created * 1000,
    };
  }

  /** At boot: what the last run left. Running ones are this run's to stop at shutdown. */
  async adopt(): Promise<ContainerInfo[]> {
    const found = await this.list();
    for (const info of found) if (info.running) this.started.add(info.name);
    return found;
  }

  /** The running container for `wanted` (created or started as needed); resolves its name. */
  ensure(wanted: ContainerWanted): Promise<string> {
    const name = this.nameFor(wanted);
    const current = this.pending.get(name);
    if (current) return current;
    const work = this.bringUp(name, wanted).finally(() => this.pending.delete(name));
    this.pending.set(name, work);
    return work;
  }

  private async bringUp(name: string, wanted: ContainerWanted): Promise<string> {
    const network = wanted.tier === 'isolated' && wanted.network;
    let inspected: Docker.ContainerInspectInfo | undefined;
    try {
      inspected = await this.engine.call(`inspect ${name}`, (docker) => docker.getContainer(name).inspect());
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    if (inspected && inspected.Config.Labels?.[LABEL_DAEMON] !== this.daemonKey) {
      throw containerNotFound(name);
    }
    const stale =
      inspected &&
      (inspected.Config.Image !== this.options.image || (inspected.HostConfig.NetworkMode !== 'none') !== network);
    if (inspected && stale) {
      // The image was rebuilt or the agent's network grant changed: the work volume stays, the container goes.
      await this.engine.call(`remove ${name}`, (docker) => docker.getContainer(name).remove({ force: true }));
      this.logger.info({ container: name }, 'compute: container recreated for a changed image or network grant');
      inspected = undefined;
    }
    if (!inspected) {
      if (!(await imagePresent(this.engine, this.options.image))) throw imageMissing(this.options.image);
      await this.engine.call(`create ${name}`, (docker) => docker.createContainer(this.spec(name, wanted, network)));
      // The volume may be new as well (removed with its container behind our back): make work dirs again.
      for (const key of this.prepared) if (key.startsWith(`${volumeOf(name)}:`)) this.prepared.delete(key);
    } else if (inspected.State.Running) {
      return name;
    }
    await this.engine.call(`start ${name}`, (docker) => docker.getContainer(name).start());
    this.started.add(name);
    return name;
  }

  private spec(name: string, wanted: ContainerWanted, network: boolean): Docker.ContainerCreateOptions {
    const { memoryMb, cpus, pids, tmpMb } = this.options;
    return {
      name,
      Image: this.options.image,
      Cmd: IDLE,
      User: '65534:65534',
      WorkingDir: '/work',
      Env: ['PATH=/bin', 'HOME=/work', 'TMPDIR=/tmp', 'LANG=C.UTF-8'],
      Labels: {
        [LABEL_DAEMON]: this.daemonKey,
        [LABEL_TIER]: wanted.tier,
        ...(wanted.tier === 'isolated' ? { [LABEL_AGENT]: wanted.agentId } : {}),
      },
      NetworkDisabled: !network,
      HostConfig: {
        NetworkMode: network ? this.options.network : 'none',
        Memory: memoryMb * MIB,
        MemorySwap: memoryMb * MIB,
        NanoCpus: Math.round(cpus * 1e9),
        PidsLimit: pids,
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        ReadonlyRootfs: true,
        Tmpfs: { '/tmp': `rw,nosuid,nodev,size=${tmpMb}m,mode=1777` },
        Mounts: [{ Type: 'volume', Source: volumeOf(name), Target: '/work' }],
        IpcMode: 'private',
        RestartPolicy: { Name: 'no' },
      },
    };
  }

  /**
   * Makes the agent's work dir in the container's volume, owned by `uid` with mode 0700, once: a
   * one-shot container with CAP_CHOWN only, no network, and a fixed script (the dir is a digest and the
   * uid a number, so nothing of the agent reaches the shell).
   */
  async prepareWorkDir(container: string, agentId: string, uid: number): Promise<string> {
    const dir = workDirOf(agentId);
    const volume = volumeOf(container);
    const key = `${volume}:${dir}`;
    if (this.prepared.has(key)) return dir;
    // chmod before chown: once chowned, root is no longer the owner (and holds no CAP_FOWNER). A dir that
    // exists was made by this script (nothing else can write the volume's root), so it is left as it is.
    const script = '[ -d "/w/$1" ] || { mkdir "/w/$1" && chmod 0700 "/w/$1" && chown "$2:$2" "/w/$1"; }';
    await this.engine.call('prepare a work dir', async (docker) => {
      const helper = await docker.createContainer({
        Image: this.options.image,
        Cmd: ['/bin/sh', '-c', script, 'sh', dir.slice('/work/'.length), String(uid)],
        User: '0:0',
        Labels: { [LABEL_DAEMON]: this.daemonKey, [LABEL_TIER]: 'helper' },
        NetworkDisabled: true,
        HostConfig: {
          NetworkMode: 'none',
          CapDrop: ['ALL'],
          CapAdd: ['CHOWN'],
          SecurityOpt: ['no-new-privileges'],
          ReadonlyRootfs: true,
          Memory: 32 * MIB,
          PidsLimit: 16,
          Mounts: [{ Type: 'volume', Source: volume, Target: '/w' }],
        },
      });
      try {
        await helper.start();
        const { StatusCode } = (await helper.wait()) as { StatusCode: number };
        if (StatusCode !== 0) throw new Error(`the work dir script exited with ${StatusCode}`);
      } finally {
        await helper.remove({ force: true }).catch(() => {});
      }
    });
    this.prepared.add(key);
    return dir;
  }

  async start(name: string): Promise<ContainerInfo> {
    const info = await this.get(name);
    if (!info.running) {
      await this.engine.call(`start ${name}`, (docker) => docker.getContainer(name).start());
      this.started.add(name);
    }
    return this.get(name);
  }

  async stop(name: string): Promise<ContainerInfo> {
    const info = await this.get(name);
    if (info.running)
      await this.engine.call(`stop ${name}`, (docker) => docker.getContainer(name).stop({ t: STOP_GRACE_S }));
    this.started.delete(name);
    return this.get(name);
  }

  /** The agent unloaded: its isolated container (if this run has it running) is stopped, kept for its next start. */
  async stopAgent(agentId: string): Promise<void> {
    const name = isolatedName(this.daemonKey, agentId);
    if (!this.started.has(name)) return;
    this.started.delete(name);
    await this.engine
      .call(`stop ${name}`, (docker) => docker.getContainer(name).stop({ t: STOP_GRACE_S }))
      .catch((error) => {
        if (!isNotFound(error) && !isNotModified(error)) throw error;
      });
  }

  /** Removes the container and its work volume (the agent's files in it are gone). */
  async destroy(name: string): Promise<void> {
    await this.get(name);
    await this.engine.call(`remove ${name}`, (docker) => docker.getContainer(name).remove({ force: true }));
    const volume = volumeOf(name);
    await this.engine
      .call(`remove the volume ${volume}`, (docker) => docker.getVolume(volume).remove())
      .catch((error) => {
        if (!isNotFound(error)) throw error;
      });
    for (const key of this.prepared) if (key.startsWith(`${volume}:`)) this.prepared.delete(key);
    this.started.delete(name);
  }

  /**
   * Shutdown: stops the containers this run started, in parallel; the shared one is also removed (its
   * volume, with the work dirs, stays), isolated ones are kept stopped for their agent's next start.
   */
  async shutdown(): Promise<void> {
    const names = [...this.started];
    this.started.clear();
    await Promise.all(
      names.map(async (name) => {
        try {
          await this.engine.call(`stop ${name}`, (docker) => docker.getContainer(name).stop({ t: STOP_GRACE_S }));
        } catch (error) {
          if (!isNotFound(error) && !isNotModified(error)) {
            this.logger.warn({ err: error, container: name }, 'compute: could not stop a container');
          }
        }
        if (name === sharedName(this.daemonKey)) {
          await this.engine
            .call(`remove ${name}`, (docker) => docker.getContainer(name).remove({ force: true }))
            .catch(() => {});
        }
      }),
    );
  }
}
