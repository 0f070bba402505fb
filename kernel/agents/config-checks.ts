/**
 * The kernel's side of the `agentConfigChecks` extension point (`contracts/points.ts`): what the owner's
 * settings that extensions own refuse in an agent config (the mcp extension: variables an agent may not
 * set for a server). A config change that brings a new problem is refused (400 `bad_request` naming each);
 * a file that loads with problems loads, and its load answer and review list them (the extension never
 * applies the refused parts: the check reports, the extension's own code is the boundary).
 */
import { type AgentConfig, agentConfigChecks, type AgentConfigProblem, type Logger } from '@agt/contracts';
import type { ExtensionPoints } from '../extensions/points.js';
import { invalidConfig } from './errors.js';

/** Every provider's problems, concatenated; a provider that throws is logged and counted as none. */
export function configProblems(
  points: ExtensionPoints,
  config: Readonly<AgentConfig>,
  agentId: string,
  logger?: Logger,
): AgentConfigProblem[] {
  const out: AgentConfigProblem[] = [];
  for (const { owner, value } of points.providers(agentConfigChecks)) {
    try {
      for (const problem of value.check(config, agentId)) {
        if (typeof problem?.field === 'string' && typeof problem.reason === 'string')
          out.push({ field: problem.field, reason: problem.reason });
      }
    } catch (error) {
      logger?.error({ err: error, owner, agentId }, 'an agent config check failed; its problems are not reported');
    }
  }
  return out;
}

/** Throws 400 `bad_request` when `next` has a problem `previous` did not have (a change may keep an old one). */
export function assertNoNewProblems(
  points: ExtensionPoints,
  previous: Readonly<AgentConfig>,
  next: Readonly<AgentConfig>,
  agentId: string,
  logger?: Logger,
): void {
  const before = new Set(configProblems(points, previous, agentId, logger).map((p) => `${p.field}\n${p.reason}`));
  const added = configProblems(points, next, agentId, logger).filter((p) => !before.has(`${p.field}\n${p.reason}`));
  if (added.length > 0) throw invalidConfig(added.map((p) => `${p.field}: ${p.reason}`).join('; '), added[0]!.field);
}
