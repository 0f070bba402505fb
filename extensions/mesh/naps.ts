/**
 * Waits between delivery attempts that `wakeAll` ends at once, so closing the mesh never leaves a retry
 * timer behind (the mesh outbound and the A2A outbound share it).
 */
export class Naps {
  private readonly sleeping = new Set<() => void>();

  sleep(ms: number): Promise<void> {
    return new Promise((done) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleeping.delete(wake);
        done();
      };
      const timer = setTimeout(wake, ms);
      this.sleeping.add(wake);
    });
  }

  wakeAll(): void {
    for (const wake of [...this.sleeping]) wake();
  }
}
