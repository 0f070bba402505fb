/**
 * The kernel's side of the agent placement point (contracts/agent-placement.ts): before a load the
 * placement provider (the `fleet` extension) must let this daemon run the agent; at unload the placement is
 * given back to the same provider that granted it, even if another has taken the point since.
 */
import { type AgentPlacement, AgtError, agentPlacement, type Logger, type PlacementRequest } from '@agt/contracts';
import { waitAtMost } from '../deadline.js';
import type { ExtensionPoints } from '../extensions/points.js';

/** The most a load waits for the placement provider. */
export const PLACEMENT_DEADLINE_MS = 10_000;

export class Placements {
  /** Who granted each agent's placement: released there. */
  private readonly granted = new Map<string, { owner: string; placement: AgentPlacement }>();

  constructor(
    private readonly points: () => ExtensionPoints,
    private readonly logger: Logger,
  ) {}

  /**
   * Asks the provider, if any, for the placement; rejects as it does (or 503 `unavailable` when it throws
   * something uncoded or does not answer within {@link PLACEMENT_DEADLINE_MS}). `lost` runs when the
   * provider says the placement is gone.
   */
  async claim(request: PlacementRequest, lost: () => void): Promise<void> {
    const [provider] = this.points().providers(agentPlacement);
    if (!provider) return;
    let once = false;
    const onLost = () => {
      if (once || !this.granted.has(request.agentId)) return;
      once = true;
      lost();
    };
    // Granted before the claim resolves: a placement lost while the claim is still settling reaches `lost`.
    this.granted.set(request.agentId, { owner: provider.owner, placement: provider.value });
    try {
      await waitAtMost(
        Promise.resolve().then(() => provider.value.claim(Object.freeze({ ...request }), onLost)),
        PLACEMENT_DEADLINE_MS,
        (): never => {
          throw new AgtError(
            'unavailable',
            `the agent placement of extension ${provider.owner} did not answer within ${PLACEMENT_DEADLINE_MS / 1000} s`,
          );
        },
      );
    } catch (error) {
      this.granted.delete(request.agentId);
      // A timed-out claim may still succeed later: give it back then.
      this.releaseLater(provider.value, request.agentId);
      if (error instanceof AgtError) throw error;
      throw new AgtError(
        'unavailable',
        `the agent placement of extension ${provider.owner} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  /** Gives the placement back to whoever granted it (nothing when none did). */
  release(agentId: string): void {
    const grant = this.granted.get(agentId);
    if (!grant) return;
    this.granted.delete(agentId);
    this.releaseLater(grant.placement, agentId);
  }

  private releaseLater(placement: AgentPlacement, agentId: string): void {
    void Promise.resolve()
      .then(() => placement.release(agentId))
      .catch((error: unknown) => this.logger.warn({ err: error, agentId }, 'releasing an agent placement failed'));
  }
}
