/**
 * `POST /agents/{id}/trigger` bodies (docs/runtime.md#dispatch-post-agentsidtrigger): the four forms normalized into
 * one shape, the daemon's defaults filled in, and the refusals applied. Pure: no agent state is touched.
 *
 * Forms: (a) `{event, target?}`; (b) `{dispatch: <a or d>}`; (c) a bare event with the target fields
 * (`scope`, `lambda`, `command`, `warm`, `loop`) at the top level or under `target`; (d) a batch
 * `{events: [...], target?, count?}`.
 */
import { randomUUID } from 'node:crypto';
import { LOOP_NAME_PATTERN } from '../agents/config-schema.js';
import { type TriggerType, MAX_JSON_DEPTH } from '@agt/contracts';
import { invalidDispatch } from './errors.js';

export const EVENT_TYPES = [
  'inbox',
  'outbox',
  'file_change',
  'chat',
  'timer',
  'tool_call',
  'task_create',
  'task_complete',
  'log_entry',
  'startup',
  'llm_call',
  'mcp_resource',
] as const;
export type TriggerEventType = (typeof EVENT_TYPES)[number];

/** Event type → the trigger (config key) it belongs to. */
export const TRIGGER_OF: Record<TriggerEventType, TriggerType> = {
  inbox: 'on_inbox',
  outbox: 'on_outbox',
  file_change: 'on_file_change',
  chat: 'on_chat',
  timer: 'on_timer',
  tool_call: 'on_tool_call',
  task_create: 'on_task_create',
  task_complete: 'on_task_complete',
  log_entry: 'on_logs',
  startup: 'on_startup',
  llm_call: 'on_llm_call',
  mcp_resource: 'on_mcp_resource',
};

export interface TriggerEvent {
  id: string;
  type: TriggerEventType;
  source: string;
  /** ISO 8601. */
  time: string;
  data: unknown;
  correlationId?: string;
}

export interface DispatchTarget {
  scope: 'agent' | 'system';
  lambda?: string;
  command?: string;
  warm?: boolean;
  /** Agent scope only; absent = main. */
  loop?: string;
}

export interface NormalizedDispatch {
  events: TriggerEvent[];
  target: DispatchTarget;
  /** Batch form: the caller's `count`, else the number of events. */
  count: number;
  batch: boolean;
}

const TARGET_KEYS = ['scope', 'lambda', 'command', 'warm', 'loop'] as const;
/** Flags the runtime uses internally; a caller setting them could forge loop history. */
const INTERNAL_FLAGS = ['skip_loop_append', 'pre_appended_loop'];
const MAX_BATCH = 1000;
/** How deep a dispatch body (its `data` included) may nest; deeper is refused rather than half-checked. */
export const MAX_BODY_DEPTH = MAX_JSON_DEPTH;
/** An ISO 8601 date-time with a zone: `2025-01-02T03:04:05Z`, `…:05.123+02:00` (seconds optional). */
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):?(\d{2}))$/i;
const loopPattern = new RegExp(LOOP_NAME_PATTERN);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Throws when an internal flag appears at any depth of the body, or the body nests too deep to check. */
function refuseInternalFlags(value: unknown, path: string, depth = 0): void {
  if (typeof value !== 'object' || value === null) return;
  if (depth >= MAX_BODY_DEPTH)
    throw invalidDispatch(
      `the body nests deeper than ${MAX_BODY_DEPTH} levels (at ${path.length > 100 ? `${path.slice(0, 100)}…` : path})`,
    );
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) refuseInternalFlags(item, `${path}[${i}]`, depth + 1);
    return;
  }
  for (const [key, inner] of Object.entries(value)) {
    if (INTERNAL_FLAGS.includes(key))
      throw invalidDispatch(`${path}.${key} is an internal flag and cannot be dispatched`);
    refuseInternalFlags(inner, `${path}.${key}`, depth + 1);
  }
}

/** A real calendar date-time in ISO 8601 form (not just anything `Date.parse` accepts, such as "1"). */
export function isIsoDateTime(text: string): boolean {
  const match = ISO_DATE_TIME.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second = 0, zoneHour = 0, zoneMinute = 0] = match
    .slice(1)
    .map((part) => (part === undefined ? undefined : Number(part))) as number[];
  const daysInMonth = new Date(Date.UTC(year!, month!, 0)).getUTCDate();
  return (
    month! >= 1 &&
    month! <= 12 &&
    day! >= 1 &&
    day! <= daysInMonth &&
    hour! <= 23 &&
    minute! <= 59 &&
    second <= 59 &&
    zoneHour <= 23 &&
    zoneMinute <= 59 &&
    !Number.isNaN(Date.parse(text))
  );
}

function normalizeEvent(raw: unknown, where: string, now: () => Date): TriggerEvent {
  if (!isObject(raw)) throw invalidDispatch(`${where} must be an object`);
  const type = raw.type;
  if (typeof type !== 'string' || type === '') throw invalidDispatch(`${where}.type is required`);
  if (!(EVENT_TYPES as readonly string[]).includes(type)) {
    throw invalidDispatch(
      `${where}.type ${JSON.stringify(type)} is not an event type (one of ${EVENT_TYPES.join(', ')})`,
    );
  }
  if (!('data' in raw) && type !== 'startup')
    throw invalidDispatch(`${where}.data is required for ${type} events (use null for none)`);
  const data = raw.data ?? null;
  if (isObject(data) && isObject(data.message) && data.message.source === 'user') {
    throw invalidDispatch(
      `${where}.data.message.source "user" is refused: use POST /agents/{id}/chat, or source "api" or "mesh"`,
    );
  }
  for (const key of ['id', 'source', 'time', 'correlationId'] as const) {
    if (raw[key] !== undefined && typeof raw[key] !== 'string')
      throw invalidDispatch(`${where}.${key} must be a string`);
  }
  if (typeof raw.time === 'string' && !isIsoDateTime(raw.time))
    throw invalidDispatch(`${where}.time must be an ISO 8601 date-time with a zone, e.g. 2025-01-02T03:04:05Z`);
  return {
    id: typeof raw.id === 'string' && raw.id !== '' ? raw.id : randomUUID(),
    type: type as TriggerEventType,
    source: typeof raw.source === 'string' && raw.source !== '' ? raw.source : 'api',
    time: typeof raw.time === 'string' ? new Date(raw.time).toISOString() : now().toISOString(),
    data,
    ...(typeof raw.correlationId === 'string' ? { correlationId: raw.correlationId } : {}),
  };
}

function normalizeTarget(raw: unknown): DispatchTarget {
  if (raw === undefined || raw === null) return { scope: 'agent' };
  if (!isObject(raw)) throw invalidDispatch('target must be an object');
  const scope = raw.scope ?? 'agent';
  if (scope !== 'agent' && scope !== 'system') throw invalidDispatch('target.scope must be "agent" or "system"');
  const target: DispatchTarget = { scope };
  if (raw.lambda !== undefined) {
    if (typeof raw.lambda !== 'string' || !/^[^:]+:[A-Za-z_$][A-Za-z0-9_$]*$/.test(raw.lambda)) {
      throw invalidDispatch('target.lambda must look like path/file.ts:functionName');
    }
    target.lambda = raw.lambda;
  }
  if (raw.command !== undefined) {
    if (typeof raw.command !== 'string' || raw.command === '')
      throw invalidDispatch('target.command must be a non-empty string');
    target.command = raw.command;
  }
  if (raw.warm !== undefined) {
    if (typeof raw.warm !== 'boolean') throw invalidDispatch('target.warm must be a boolean');
    target.warm = raw.warm;
  }
  if (raw.loop !== undefined) {
    if (typeof raw.loop !== 'string' || !loopPattern.test(raw.loop))
      throw invalidDispatch(`target.loop must match ${LOOP_NAME_PATTERN}`);
    target.loop = raw.loop;
  }
  if (scope === 'system' && !target.lambda && !target.command)
    throw invalidDispatch('a system-scope target needs a lambda or a command');
  if (scope === 'system' && target.lambda && target.command)
    throw invalidDispatch('a system-scope target takes a lambda or a command, not both');
  if (scope === 'agent' && (target.lambda || target.command))
    throw invalidDispatch('lambda and command need scope "system"');
  return target;
}

/** Normalizes any of the four body forms; throws `bad_request` naming what is wrong. */
export function normalizeDispatch(body: unknown, now: () => Date = () => new Date()): NormalizedDispatch {
  if (!isObject(body)) throw invalidDispatch('the trigger body must be a JSON object');
  refuseInternalFlags(body, 'body');
  let root = body;
  if ('dispatch' in root) {
    if (!isObject(root.dispatch)) throw invalidDispatch('dispatch must be an object');
    root = root.dispatch;
    if ('dispatch' in root) throw invalidDispatch('dispatch cannot be nested twice');
  }
  if ('events' in root) {
    if (!Array.isArray(root.events) || root.events.length === 0)
      throw invalidDispatch('events must be a non-empty array');
    if (root.events.length > MAX_BATCH) throw invalidDispatch(`a batch holds at most ${MAX_BATCH} events`);
    const events = root.events.map((e, i) => normalizeEvent(e, `events[${i}]`, now));
    if (root.count !== undefined && (!Number.isInteger(root.count) || (root.count as number) < 0)) {
      throw invalidDispatch('count must be a non-negative integer');
    }
    return {
      events,
      target: normalizeTarget(root.target),
      count: (root.count as number | undefined) ?? events.length,
      batch: true,
    };
  }
  if ('event' in root) {
    return {
      events: [normalizeEvent(root.event, 'event', now)],
      target: normalizeTarget(root.target),
      count: 1,
      batch: false,
    };
  }
  // Bare event: target fields under `target`, else at the top level (they are not event fields).
  const { target: nested, ...rest } = root;
  const top: Record<string, unknown> = {};
  const event: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) {
    if ((TARGET_KEYS as readonly string[]).includes(key)) top[key] = value;
    else event[key] = value;
  }
  if (nested !== undefined && Object.keys(top).length > 0)
    throw invalidDispatch('give target fields either at the top level or under target, not both');
  return {
    events: [normalizeEvent(event, 'event', now)],
    target: normalizeTarget(nested ?? (Object.keys(top).length > 0 ? top : undefined)),
    count: 1,
    batch: false,
  };
}
