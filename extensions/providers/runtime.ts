/**
 * The state every model client of the extension shares, and how it ends: stopping aborts every
 * running attempt (its HTTP request is cancelled) and every backoff or spacing wait, and closes the
 * kept-alive connections, so no call outlives the extension and no timer or socket is left behind.
 */
import type { Logger } from '@agt/contracts';
import type { CallGuard } from './call-guard.js';
import type { ClientRuntime } from './model-client.js';
import { resolveOptions, type ProvidersOptions } from './options.js';
import { SpacingGates } from './spacing.js';
import { closeWireConnections } from './wire-http.js';

export function createRuntime(
  config: ProvidersOptions | undefined,
  logger: Logger,
): { runtime: ClientRuntime; stop(): void } {
  const stopping = new AbortController();
  const runtime: ClientRuntime = {
    options: resolveOptions(config),
    gates: new SpacingGates(),
    logger,
    inflight: new Set<CallGuard>(),
    stopSignal: stopping.signal,
  };
  return {
    runtime,
    stop() {
      stopping.abort();
      for (const guard of runtime.inflight) guard.abort('stopped');
      runtime.inflight.clear();
      runtime.gates.clear();
      closeWireConnections();
    },
  };
}
