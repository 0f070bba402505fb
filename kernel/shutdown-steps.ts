/** The steps the daemon's shutdown sequence runs: HTTP first, then agents, then extensions, then the rest. */

export type ShutdownPhase = 'agents' | 'extensions' | 'final';

export interface ShutdownStep {
  name: string;
  phase: ShutdownPhase;
  /** `deadlineMs` is this step's share of the overall cap; a step must stop by then. */
  run(deadlineMs: number): Promise<void> | void;
}

export class ShutdownSteps {
  private readonly steps: ShutdownStep[] = [];

  add(step: ShutdownStep): void {
    this.steps.push(step);
  }

  /** Steps of one phase, last added first (the reverse of start-up). */
  phase(phase: ShutdownPhase): ShutdownStep[] {
    return this.steps.filter((step) => step.phase === phase).reverse();
  }
}
