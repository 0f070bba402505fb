/**
 * An agent's outgoing messages handed to the message carrier that takes them (`contracts/message-carriers.ts`),
 * else to the outbound transport that claims their address (an extension's, `contracts/points.ts`). The outbox row records the delivery: `pending` while the
 * transport has it, then `delivered` or `failed`; tries the transport reports as failed count in
 * `attempts`. Without a claimant the row stays `queued`.
 */
import { type OutboundReport, outboundAddress } from '@agt/contracts';
import type { OutboxMessage } from '../agents/stores/message-stores.js';
import type { OutboundSending } from '../extensions/kernel-points.js';
import type { RuntimeDeps } from './runtime-deps.js';
import type { LogFields, RuntimeAgent } from './types.js';

/** What a delivery needs of the agent's runtime (AgentRuntime gives it). */
export interface OutboundHost {
  readonly agent: RuntimeAgent;
  readonly deps: Pick<RuntimeDeps, 'sendOutbound'>;
  /** Runs a write of the durable runtime state; never throws (AgentEvents.durably). */
  durably(what: string, write: () => void): void;
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: LogFields): void;
}

/**
 * Hands one committed outbox row to its transport. `resumed`: the row was `pending` when the agent loaded (a
 * restart). Never throws.
 */
export function sendOutbound(host: OutboundHost, row: OutboxMessage, resumed = false): void {
  const address = outboundAddress(row.channel, row.recipient);
  const outbox = host.agent.file.outbox;
  const report: OutboundReport = {
    attemptFailed: (statusCode, error) =>
      host.durably('count a failed delivery try', () =>
        outbox.setStatus(row.id, 'pending', {
          attempted: true,
          statusCode: typeof statusCode === 'number' ? statusCode : null,
          error: String(error).slice(0, 500),
        }),
      ),
  };
  const chosen = host.deps.sendOutbound?.(
    {
      agentId: host.agent.id,
      messageId: row.id,
      address,
      channel: row.channel,
      recipient: row.recipient,
      text: row.text,
      ...(row.data === null || row.data === undefined ? {} : { data: row.data }),
      ...(resumed ? { resumed: true } : {}),
    },
    report,
  );
  if (chosen instanceof Promise)
    void chosen.then(
      (sending) => sending && follow(host, row, address, resumed, sending),
      (error: unknown) => host.log('warn', `outbox message ${row.id} to ${address} found no carrier: ${String(error)}`),
    );
  else if (chosen) follow(host, row, address, resumed, chosen);
}

/** Marks the row `pending` (unless it was already), then `delivered` or `failed` as its delivery settles. */
function follow(host: OutboundHost, row: OutboxMessage, address: string, resumed: boolean, sending: OutboundSending) {
  const outbox = host.agent.file.outbox;
  if (!resumed) host.durably('mark an outbox message pending', () => outbox.setStatus(row.id, 'pending'));
  void sending.delivery.then(
    (result) => {
      const statusCode = typeof result?.statusCode === 'number' ? result.statusCode : undefined;
      host.durably('mark an outbox message delivered', () =>
        outbox.setStatus(row.id, 'delivered', {
          attempted: true,
          deliveredAt: Date.now(),
          ...(statusCode === undefined ? {} : { statusCode }),
        }),
      );
    },
    (error: unknown) => {
      const why = error instanceof Error ? error.message : String(error);
      const code = (error as { statusCode?: unknown } | null)?.statusCode;
      host.durably('mark an outbox message failed', () =>
        outbox.setStatus(row.id, 'failed', {
          error: why,
          attempted: true,
          ...(typeof code === 'number' ? { statusCode: code } : {}),
        }),
      );
      host.log(
        'warn',
        `outbox message ${row.id} to ${address} failed (transport of extension ${sending.owner}): ${why}`,
        {
          event: 'outbox_failed',
        },
      );
    },
  );
}

/** Rows a previous run handed to a transport and never settled go out again (the receiver drops repeats). */
export function resumeOutbound(host: OutboundHost): void {
  for (const row of host.agent.file.outbox.list({ status: 'pending' })) sendOutbound(host, row, true);
}
