/**
 * Where an agent's command runs, and running it there. The tier comes from the agent's config
 * (`security.compute_tier`: `shared` by default, `isolated`, `host`; `security` is owner-only) and the
 * network grant from `security.compute_network`. The `host` tier needs the owner's consent beside it
 * (settings `computeHostAgents`) and runs in the kernel's host runner. A container that vanished or
 * stopped behind the daemon's back is brought back and the exec tried once more.
 */
import { AgtError } from '@agt/contracts';
import type { ExtensionContext } from '@agt/contracts';
import type { CommandOutcome, CommandRun } from '@agt/contracts';
import type { Containers } from './containers.js';
import type { Engine } from './engine.js';
import { agentNotLoaded, hostTierNotAllowed, tierNotAllowed } from './errors.js';
import { execInContainer } from './exec.js';
import type { ExecLog } from './exec-log.js';
import type { ContainerTier } from './labels.js';
import type { UidTable } from './uids.js';

export type Tier = ContainerTier | 'host';
export const TIERS: readonly Tier[] = ['shared', 'isolated', 'host'];

export interface ExecRequest extends CommandRun {
  origin: 'tool' | 'command';
  /** A tier other than the agent's own: `isolated` for a `shared` agent (a stronger boundary), else refused. */
  target?: Tier;
}

type Ctx = Pick<ExtensionContext, 'agents' | 'settings' | 'logger'>;

export class Compute {
  constructor(
    private readonly ctx: Ctx,
    readonly engine: Engine,
    readonly containers: Containers,
    private readonly uids: UidTable,
    readonly log: ExecLog,
  ) {}

  /** The agent's tier and network grant; `not_found` when it is not loaded. */
  placement(agentId: string): { tier: Tier; network: boolean } {
    const agent = this.ctx.agents.find(agentId);
    if (!agent || agent.id !== agentId) throw agentNotLoaded(agentId);
    const security = (agent.config.security ?? {}) as Record<string, unknown>;
    const tier = TIERS.includes(security.compute_tier as Tier) ? (security.compute_tier as Tier) : 'shared';
    return { tier, network: security.compute_network === true };
  }

  hostAllowed(agentId: string): boolean {
    return (this.ctx.settings.current().computeHostAgents ?? []).includes(agentId);
  }

  /** The tier a request runs in: the agent's own, or `isolated` asked by a `shared` agent; `forbidden` otherwise. */
  tierFor(agentId: string, asked?: Tier): { tier: Tier; network: boolean } {
    const own = this.placement(agentId);
    const tier = asked ?? own.tier;
    if (tier !== own.tier && !(own.tier === 'shared' && tier === 'isolated'))
      throw tierNotAllowed(agentId, tier, own.tier);
    if (tier === 'host' && !this.hostAllowed(agentId)) throw hostTierNotAllowed(agentId);
    return { tier, network: own.network };
  }

  /** Runs the request where it belongs and writes the exec log; rejects with a coded error when it cannot run. */
  async run(request: ExecRequest): Promise<CommandOutcome> {
    const startedAt = Date.now();
    const entry = { agentId: request.agentId, origin: request.origin, command: request.command, started_at: startedAt };
    try {
      const { tier, network } = this.tierFor(request.agentId, request.target);
      const outcome =
        tier === 'host'
          ? await this.ctx.agents.runHostCommand(request)
          : await this.inContainer(request, tier, network);
      this.log.add({
        ...entry,
        target: outcome.target,
        exit_code: outcome.exitCode,
        timed_out: outcome.timedOut,
        error: null,
        duration_ms: Date.now() - startedAt,
        stdout_bytes: Buffer.byteLength(outcome.stdout),
        stderr_bytes: Buffer.byteLength(outcome.stderr),
      });
      return outcome;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.log.add({
        ...entry,
        target: null,
        exit_code: null,
        timed_out: false,
        error: message,
        duration_ms: Date.now() - startedAt,
        stdout_bytes: 0,
        stderr_bytes: 0,
      });
      throw error;
    }
  }

  private async inContainer(request: ExecRequest, tier: ContainerTier, network: boolean): Promise<CommandOutcome> {
    const uid = await this.uids.uidOf(request.agentId);
    for (let attempt = 1; ; attempt++) {
      const container = await this.containers.ensure({ tier, agentId: request.agentId, network });
      const workDir = await this.containers.prepareWorkDir(container, request.agentId, uid);
      try {
        return await execInContainer(this.engine, {
          container,
          command: request.command,
          stdin: request.stdin,
          user: `${uid}:${uid}`,
          workDir,
          env: ['PATH=/bin', `HOME=${workDir}`, 'TMPDIR=/tmp', 'LANG=C.UTF-8', `AGT_AGENT_ID=${request.agentId}`],
          timeoutMs: request.timeoutMs,
          signal: request.signal,
        });
      } catch (error) {
        // 404: removed since `ensure`; 409: stopped or paused. Bring it back once.
        const gone = error instanceof AgtError && (error.code === 'not_found' || error.code === 'conflict');
        if (!gone || attempt > 1) throw error;
        this.ctx.logger.info(
          { container, agentId: request.agentId },
          'compute: the container went away behind the daemon; bringing it back',
        );
      }
    }
  }
}
