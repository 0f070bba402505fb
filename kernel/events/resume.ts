/**
 * Where a `GET /events` stream starts (docs/events.md#resuming): which buffered frames are replayed and whether
 * a `stream.gap` tells the client its resume is not exact. Pure, so every case is tested directly.
 */
import { badRequest } from '@agt/contracts';
import type { FrameOrigin, KernelBus } from './bus.js';

/** What a client asked for, already validated. */
export interface ResumeRequest {
  /** `?since`, else `Last-Event-ID`; null when the client sent neither. */
  cursor: number | null;
  /** `?epoch`; null when absent. */
  epoch: string | null;
  /** `?agentId`; null streams every agent's events. */
  agentId: string | null;
}

export type GapReason = 'evicted' | 'epoch_changed';

/** Where the stream starts: frames with a cursor greater than `startAfter` are replayed. */
export interface ResumePlan {
  gap: GapReason | null;
  startAfter: number;
  /** A stream resuming from an earlier run: the last frame it had there (it is not given repeats of it). */
  seen?: FrameOrigin;
}

/**
 * Decides replay and gap for a connect (pure; throws 400 before anything is streamed).
 * - no cursor: live only, nothing replayed (the client reads `latestCursor` from `stream.hello`);
 * - `epoch` differs from this run: gap `epoch_changed`, the whole buffer is replayed;
 * - cursor beyond the newest one and no `epoch`: a cursor of an earlier run, treated as `epoch_changed`;
 *   with a matching `epoch` such a cursor was never issued: 400;
 * - frames after the cursor already left the buffer: gap `evicted`, the whole buffer is replayed.
 */
export function planResume(
  bus: Pick<KernelBus, 'epoch' | 'latest' | 'oldestCursor'>,
  request: ResumeRequest,
): ResumePlan {
  const latest = bus.latest;
  const beforeBuffer = (bus.oldestCursor ?? latest + 1) - 1;
  if (request.epoch !== null && request.epoch !== bus.epoch) {
    const seen = request.cursor === null ? {} : { seen: { epoch: request.epoch, cursor: request.cursor } };
    return { gap: 'epoch_changed', startAfter: beforeBuffer, ...seen };
  }
  if (request.cursor === null) return { gap: null, startAfter: latest };
  if (request.cursor > latest) {
    if (request.epoch !== null) {
      throw badRequest(`cursor ${request.cursor} was never issued in this epoch (latest is ${latest})`);
    }
    return { gap: 'epoch_changed', startAfter: beforeBuffer };
  }
  if (request.cursor < beforeBuffer) return { gap: 'evicted', startAfter: beforeBuffer };
  return { gap: null, startAfter: request.cursor };
}
