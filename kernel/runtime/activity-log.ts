/**
 * Log lines a person can read, one per thing an agent did: a turn (agent, loop, turn id, model, tokens,
 * duration, how it ended), a tool call, an owner wait (approval, ask, suspend). They are read off the
 * event bus, so the runtime's hot path is untouched; at `warn` and above the subscription is not even
 * made. Secrets never appear: tool arguments and questions are not logged, only names and ids.
 */
import type { EventBus, UmbilicalEvent, Logger } from '@agt/contracts';

interface OpenTurn {
  startedAt: number;
  trigger: string;
  model: string | null;
  input: number;
  output: number;
}

/** Turns that never report an end (an unload mid-turn) are forgotten past this many. */
const MAX_OPEN_TURNS = 10_000;

/**
 * Subscribes the activity log; returns the unsubscribe. `nameOf` gives an agent's name for the line
 * (the id is logged too).
 */
export function logActivity(
  bus: EventBus,
  logger: Logger,
  nameOf: (agentId: string) => string | undefined,
): () => void {
  const open = new Map<string, OpenTurn>();
  const key = (event: UmbilicalEvent, turnId: string) => `${event.agent_id}\u0000${turnId}`;
  const who = (event: UmbilicalEvent) => ({
    agent: nameOf(event.agent_id!) ?? event.agent_id,
    agentId: event.agent_id,
    loop: event.loop ?? 'main',
  });

  return bus.subscribe((event) => {
    if (!event.agent_id) return;
    const p = event.payload as Record<string, any>;
    switch (event.event_type) {
      case 'turn.started': {
        if (open.size >= MAX_OPEN_TURNS) open.delete(open.keys().next().value!);
        open.set(key(event, p.turn_id), {
          startedAt: event.timestamp,
          trigger: p.trigger,
          model: null,
          input: 0,
          output: 0,
        });
        return;
      }
      case 'llm.completed': {
        const turn = event.turn_id ? open.get(key(event, event.turn_id)) : undefined;
        if (!turn) return;
        turn.model = `${p.provider}/${p.model}`;
        turn.input += Number(p.usage?.input ?? 0);
        turn.output += Number(p.usage?.output ?? 0);
        return;
      }
      case 'turn.completed':
      case 'agent.error': {
        const turnId: string | undefined = p.turn_id ?? event.turn_id;
        if (!turnId) {
          if (event.event_type === 'agent.error')
            logger.warn({ ...who(event), code: p.code }, `agent error: ${p.message}`);
          return;
        }
        const turn = open.get(key(event, turnId));
        open.delete(key(event, turnId));
        const fields = {
          ...who(event),
          turnId,
          trigger: turn?.trigger ?? null,
          model: turn?.model ?? null,
          tokens: { input: turn?.input ?? 0, output: turn?.output ?? 0 },
          durationMs: turn ? Math.max(0, event.timestamp - turn.startedAt) : null,
        };
        if (event.event_type === 'turn.completed') {
          logger.info(
            { ...fields, end: p.stop_reason, llmCalls: p.llm_calls, toolCalls: p.tool_calls },
            'turn completed',
          );
        } else {
          logger.warn({ ...fields, end: 'error', code: p.code }, `turn failed: ${p.message}`);
        }
        return;
      }
      case 'tool.completed':
        logger.info(
          {
            ...who(event),
            turnId: event.turn_id ?? null,
            tool: p.tool,
            callId: p.call_id,
            ok: p.ok,
            durationMs: p.duration_ms,
          },
          'tool call',
        );
        return;
      case 'hil.requested': {
        const base = { ...who(event), turnId: event.turn_id ?? null, kind: p.kind };
        if (p.kind === 'approval') logger.info({ ...base, taskId: p.taskId, tool: p.tool }, 'waiting for approval');
        else if (p.kind === 'ask') logger.info({ ...base, requestId: p.requestId }, 'waiting for an answer');
        else logger.info({ ...base, requestId: p.requestId }, 'waiting for a resume');
        return;
      }
      case 'agent.unloaded':
        for (const name of [...open.keys()]) if (name.startsWith(`${event.agent_id}\u0000`)) open.delete(name);
        return;
      default:
    }
  });
}
