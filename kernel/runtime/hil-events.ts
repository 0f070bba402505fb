/** Turns HIL store notifications into bus events and `on_task_*` trigger offers for one agent. */
import type { EventPayloads, EventType } from '@agt/contracts';
import type { AskRequest, HilListener, SuspendPrompt, Task } from './hil.js';
import type { TriggerOrigin } from './triggers/evaluator.js';

/** What the listener does with a notification: the agent's runtime hands itself over as this. */
export interface HilEventTarget {
  emit<T extends EventType>(type: T, payload: EventPayloads[T], options?: { loop?: string; turnId?: string }): void;
  fire(type: 'on_task_create' | 'on_task_complete', data: unknown, origin: TriggerOrigin): unknown;
}

export function hilListener(runtime: HilEventTarget): HilListener {
  const where = (item: { loop: string; turnId: string | null }) => ({
    loop: item.loop,
    turnId: item.turnId ?? undefined,
  });
  return {
    taskCreated(task: Task) {
      runtime.emit('task.created', { taskId: task.id, tool: task.tool, status: task.status }, where(task));
      runtime.fire('on_task_create', { taskId: task.id, tool: task.tool, status: task.status }, where(task));
    },
    taskFinished(task: Task) {
      runtime.fire('on_task_complete', { taskId: task.id, tool: task.tool, status: task.status }, where(task));
    },
    requested(kind, item) {
      if (kind === 'approval') {
        const task = item as Task;
        runtime.emit('hil.requested', { kind, taskId: task.id, tool: task.tool, args: task.args }, where(task));
      } else if (kind === 'ask') {
        const ask = item as AskRequest;
        runtime.emit(
          'hil.requested',
          { kind, requestId: ask.requestId, question: ask.question, ...(ask.schema ? { schema: ask.schema } : {}) },
          where(ask),
        );
      } else {
        const prompt = item as SuspendPrompt;
        runtime.emit('hil.requested', { kind, requestId: prompt.requestId, reason: prompt.reason }, where(prompt));
      }
    },
    resolved(kind, id, resolution, loop, turnId) {
      runtime.emit('hil.resolved', { kind, id, resolution }, { loop, turnId: turnId ?? undefined });
    },
  };
}
