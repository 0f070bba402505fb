/**
 * The kernel's side of `agt.agent-file-written` (contracts/agent-file-changes.ts): after the kernel
 * writes an agent file, every observer is told, and the request waits for them, so an index an
 * extension keeps (tracked-folders) holds the file before the caller hears back.
 */
import { AGENT_FILE_NOTICE_DEADLINE_MS, agentFileObservers, type AgentFileChange, type Logger } from '@agt/contracts';
import { waitAtMost } from '../deadline.js';
import type { ExtensionPoints } from './points.js';

/**
 * Tells every observer about `change` at the same time and waits for all of them, each at most
 * `deadlineMs`. Never throws: the write is done; an observer that fails or is late is logged and goes
 * on in the background.
 */
export async function announceAgentFileChange(
  points: ExtensionPoints,
  logger: Pick<Logger, 'warn'>,
  change: AgentFileChange,
  deadlineMs = AGENT_FILE_NOTICE_DEADLINE_MS,
): Promise<void> {
  const observers = points.providers(agentFileObservers);
  if (observers.length === 0) return;
  const notice = Object.freeze({ ...change });
  await Promise.all(
    observers.map(async ({ owner, value }) => {
      try {
        await waitAtMost(
          Promise.resolve().then(() => value.written(notice)),
          deadlineMs,
          () => {
            logger.warn(
              { extension: owner, ...notice },
              `the agent file observer of extension ${owner} did not answer within ${deadlineMs} ms`,
            );
          },
        );
      } catch (error) {
        logger.warn(
          { err: error, extension: owner, ...notice },
          `the agent file observer of extension ${owner} failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }),
  );
}
