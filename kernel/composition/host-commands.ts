/**
 * Agents' host commands: one bubblewrap sandbox per command, limits and private paths read from the
 * settings at every command (a PATCH applies to the next one). What the probe found is logged once.
 */
import type { FastifyBaseLogger } from 'fastify';
import { HostCommandRunner } from '../runtime/sandbox/command-runner.js';
import { resolveCommandLimits } from '../runtime/sandbox/command-limits.js';
import type { SettingsStore } from '../settings.js';

export function hostCommandRunner(input: {
  dataDir: string;
  settings: SettingsStore;
  logger: FastifyBaseLogger;
  /** True when the loaded agent of this id holds the key the id is bound to (its work folder and uid go only to it). */
  holdsKey: (agentId: string) => boolean;
}): HostCommandRunner {
  const { dataDir, settings, logger } = input;
  return new HostCommandRunner({
    dataDir,
    limits: () => resolveCommandLimits(settings.current().commandLimits),
    privatePaths: () => {
      const current = settings.current();
      return [...(current.agentsFolder ? [current.agentsFolder] : []), ...(current.trackedFolders ?? [])];
    },
    holdsKey: input.holdsKey,
    onProbe: (state) => {
      if (state.available && state.fallback)
        logger.warn(
          { mode: state.mode, reason: state.fallback },
          "agents' commands run in a bubblewrap sandbox without a user namespace of their own",
        );
      else if (state.available) logger.info({ mode: state.mode }, "agents' commands run in a bubblewrap sandbox");
      else
        logger.warn(
          { reason: state.reason },
          "agents' commands cannot be sandboxed here: they are refused unless unsandboxed commands are allowed",
        );
    },
  });
}
