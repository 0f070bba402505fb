/**
 * The kernel's side of the extension points it consumes (`contracts/points.ts`): finding an agent file
 * through the agent locator, and handing an outbox message to the transport that claims its address.
 * Routes and the runtime call these with the daemon's {@link ExtensionPoints} (`contributions.points`).
 */
import { isAbsolute } from 'node:path';
import {
  AgtError,
  agentForwarder,
  agentReplication,
  REPLICA_WAIT_MS,
  type Logger,
  type RemoteAgent,
  isTraceparent,
  traceContext,
  type InboundTrace,
  type ToolCallTrace,
  agentLocator,
  commandExecutor,
  outboundTransports,
  messageCarriers,
  CARRIER_DECISION_MS,
  requestCredentials,
  type CredentialRequest,
  type CommandOutcome,
  type CommandRun,
  type OutboundEnvelope,
  type OutboundReport,
  type OutboundResult,
  type OutboundTransport,
} from '@agt/contracts';
import { waitAtMost } from '../deadline.js';
import { locatorAnswerInvalid, locatorFailed, locatorTimedOut } from './errors.js';
import type { ExtensionPoints } from './points.js';

/** The most the kernel waits for the agent locator. */
export const LOCATE_DEADLINE_MS = 10_000;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Absolute paths of agent files that the agent locator finds for `reference` (an id, handle or name
 * no loaded agent matches), without duplicates; `null` when no extension offers a locator (the caller
 * says which extension would). A locator that throws, or takes longer than {@link LOCATE_DEADLINE_MS},
 * answers 503 `unavailable` (the status for a subsystem that cannot serve). Paths that are not
 * absolute are dropped.
 */
export async function locateAgentFiles(points: ExtensionPoints, reference: string): Promise<string[] | null> {
  const [locator] = points.providers(agentLocator);
  if (!locator) return null;
  let found: readonly unknown[];
  try {
    found = await waitAtMost(
      Promise.resolve().then(() => locator.value.locate(reference)),
      LOCATE_DEADLINE_MS,
      (): never => {
        throw locatorTimedOut(locator.owner, LOCATE_DEADLINE_MS);
      },
    );
  } catch (error) {
    if (error instanceof AgtError && error.code === 'unavailable') throw error;
    throw locatorFailed(locator.owner, message(error), error);
  }
  if (!Array.isArray(found)) throw locatorAnswerInvalid(locator.owner);
  return [...new Set(found.filter((path): path is string => typeof path === 'string' && isAbsolute(path)))];
}

/** The transport that claims `address`: the first, in load order, with a matching scheme. */
export function outboundTransportFor(
  points: ExtensionPoints,
  address: string,
): { owner: string; transport: OutboundTransport } | undefined {
  const lower = address.toLowerCase();
  for (const { owner, value } of points.providers(outboundTransports)) {
    const schemes = Array.isArray(value.schemes) ? value.schemes : [];
    if (schemes.some((scheme) => typeof scheme === 'string' && scheme !== '' && lower.startsWith(scheme.toLowerCase())))
      return { owner, transport: value };
  }
  return undefined;
}

/** Who delivers one outbox message, and the delivery. */
export interface OutboundSending {
  owner: string;
  delivery: Promise<OutboundResult | void>;
}

/**
 * Hands `envelope` to the message carrier that takes it (contracts/message-carriers.ts), else to the
 * transport that claims its address, and returns the delivery; undefined when none does (the message stays
 * queued, as before there were transports). Without carriers the choice is made at once (no promise); with
 * some it waits for their answers, each at most {@link CARRIER_DECISION_MS} (a throw or a late answer is a
 * no, told to `warn`). A carrier or transport that throws instead of rejecting is a rejected delivery.
 */
export function sendOutbound(
  points: ExtensionPoints,
  envelope: OutboundEnvelope,
  report: OutboundReport,
  warn: (message: string) => void = () => {},
): OutboundSending | Promise<OutboundSending | undefined> | undefined {
  const traceparent = outboundTrace(points, envelope);
  const handed = Object.freeze({ ...envelope, ...(traceparent ? { traceparent } : {}) });
  const carriers = points.providers(messageCarriers);
  const byTransport = (): OutboundSending | undefined => {
    const claimant = outboundTransportFor(points, envelope.address);
    if (!claimant) return undefined;
    return { owner: claimant.owner, delivery: Promise.resolve().then(() => claimant.transport.send(handed, report)) };
  };
  if (carriers.length === 0) return byTransport();
  return (async () => {
    for (const { owner, value } of carriers) {
      const takes = await waitAtMost(
        Promise.resolve().then(() => value.takes(handed)),
        CARRIER_DECISION_MS,
        () => {
          warn(`the message carrier of extension ${owner} did not decide within ${CARRIER_DECISION_MS} ms`);
          return false;
        },
      ).catch((error: unknown) => {
        warn(`the message carrier of extension ${owner} failed to decide: ${message(error)}`);
        return false;
      });
      if (takes === true) return { owner, delivery: Promise.resolve().then(() => value.send(handed, report)) };
    }
    return byTransport();
  })();
}

/**
 * Runs a system-scope command through the command executor an extension offers; undefined when none
 * does or it leaves the command to the kernel's host runner. Its rejections pass through: a command
 * whose container cannot run fails, it never falls back to the host.
 */
export async function executeCommand(points: ExtensionPoints, run: CommandRun): Promise<CommandOutcome | undefined> {
  const [executor] = points.providers(commandExecutor);
  return executor ? executor.value.run(run) : undefined;
}

/**
 * Does an extension's credential check ({@link requestCredentials}) accept this request? A check that
 * throws counts as a refusal (the request then answers 401 as without credential).
 */
export function acceptedByCredentialChecks(points: ExtensionPoints, request: CredentialRequest): boolean {
  for (const { value } of points.providers(requestCredentials)) {
    try {
      if (value.accepts(request) === true) return true;
    } catch {
      // A broken check never lets a request in.
    }
  }
  return false;
}

/** The `traceContext` provider's traceparent for an outbound message; undefined without one (or when it throws). */
function outboundTrace(points: ExtensionPoints, envelope: OutboundEnvelope): string | undefined {
  const [tracer] = points.providers(traceContext);
  if (!tracer) return undefined;
  try {
    const value = tracer.value.outbound({
      agentId: envelope.agentId,
      messageId: envelope.messageId,
      channel: envelope.channel,
      address: envelope.address,
    });
    return isTraceparent(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A running tool call's traceparent from the `traceContext` provider; undefined without one (or when it throws). */
export function toolCallTrace(points: ExtensionPoints, call: ToolCallTrace): string | undefined {
  const [tracer] = points.providers(traceContext);
  if (!tracer?.value.toolCall) return undefined;
  try {
    const value = tracer.value.toolCall(call);
    return isTraceparent(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Hands an inbound message's traceparent to the `traceContext` provider, if any; its throws are ignored. */
export function inboundTrace(points: ExtensionPoints, trace: InboundTrace): void {
  const [tracer] = points.providers(traceContext);
  try {
    tracer?.value.inbound(trace);
  } catch {
    // Tracing never changes a delivery.
  }
}

/** The most `GET /agents` waits for the agent forwarder's list of agents other daemons run. */
export const REMOTE_AGENTS_DEADLINE_MS = 2_000;

/**
 * The agents other daemons of a fleet run (the `agentForwarder` provider's list), without the ones loaded
 * here; empty without a forwarder, and when it throws, answers something malformed or takes longer than
 * {@link REMOTE_AGENTS_DEADLINE_MS}: the local list never waits on, or fails with, the fleet.
 */
export async function remoteAgents(
  points: ExtensionPoints,
  loadedHere: (id: string) => boolean,
): Promise<RemoteAgent[]> {
  const [forwarder] = points.providers(agentForwarder);
  if (!forwarder) return [];
  try {
    const listed = await waitAtMost(
      Promise.resolve().then(() => forwarder.value.remoteAgents()),
      REMOTE_AGENTS_DEADLINE_MS,
      () => [] as readonly RemoteAgent[],
    );
    if (!Array.isArray(listed)) return [];
    return listed.filter(
      (agent): agent is RemoteAgent =>
        typeof agent?.id === 'string' &&
        typeof agent.name === 'string' &&
        typeof agent.daemon === 'string' &&
        !loadedHere(agent.id),
    );
  } catch {
    return [];
  }
}

/**
 * Waits (at most {@link REPLICA_WAIT_MS}) until the replication provider, if any, stored a copy of the
 * agent's file made after now (contracts/agent-replication.ts): before a chat's 202, and before the 200 of a
 * chat that waited for its turn. Never throws: a late or failed replica is logged, and the chat is answered
 * anyway (it is committed to the agent's own file).
 */
export async function awaitReplica(points: ExtensionPoints, logger: Logger, agentId: string, turnId: string) {
  const [provider] = points.providers(agentReplication);
  if (!provider) return;
  const done = await waitAtMost(
    Promise.resolve()
      .then(() => provider.value.replicated(agentId, turnId))
      .then(
        () => true,
        (error: unknown) => {
          logger.warn({ agentId, turnId, err: error }, `replicating an agent file failed (${provider.owner})`);
          return true;
        },
      ),
    REPLICA_WAIT_MS,
    () => false,
  );
  if (!done)
    logger.warn({ agentId, turnId }, `no replica of the agent file within ${REPLICA_WAIT_MS} ms (${provider.owner})`);
}
