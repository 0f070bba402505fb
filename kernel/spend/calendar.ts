/**
 * Budget days and months in the owner's time zone (settings `timezone`, default the machine's). Bounds
 * are UTC milliseconds, so ledger rows (stored with their UTC time) are summed by a plain range; a
 * moved time zone setting re-reads history in the new zone.
 */
import { validTimeZone } from '../time-zone.js';

export interface Periods {
  /** `YYYY-MM-DD` in the zone. */
  day: string;
  dayStart: number;
  dayEnd: number;
  monthStart: number;
  monthEnd: number;
}

// Asked at every model call (the budget periods); building an Intl.DateTimeFormat each time was ~2% of a
// turn's CPU, so the machine's zone is kept per value of TZ (and known zones in time-zone.ts).
let machineZone: { tz: string | undefined; zone: string } | undefined;

export { validTimeZone };

export function machineTimeZone(): string {
  if (machineZone?.tz !== process.env.TZ) machineZone = undefined;
  machineZone ??= { tz: process.env.TZ, zone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC' };
  return machineZone.zone;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function parts(at: number, zone: string): { y: number; m: number; d: number; h: number; min: number; s: number } {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, format);
  }
  const out: Record<string, number> = {};
  for (const part of format.formatToParts(new Date(at)))
    if (part.type !== 'literal') out[part.type] = Number(part.value);
  return { y: out.year!, m: out.month!, d: out.day!, h: out.hour!, min: out.minute!, s: out.second! };
}

/** The zone's offset from UTC at `at`, in ms (local = utc + offset). */
function offsetAt(at: number, zone: string): number {
  const p = parts(at, zone);
  return Date.UTC(p.y, p.m - 1, p.d, p.h, p.min, p.s) - Math.floor(at / 1000) * 1000;
}

/** The UTC instant of local midnight of y-m-d in `zone` (DST-safe: the offset is taken twice). */
function localMidnight(y: number, m: number, d: number, zone: string): number {
  const guess = Date.UTC(y, m - 1, d);
  const first = guess - offsetAt(guess, zone);
  return guess - offsetAt(first, zone);
}

// The periods of the current day per zone: asked three times per model call, and each answer costs nine
// `formatToParts` (~3% of a turn's CPU). Any instant inside the same local day has the same
// periods, so the last answer per zone serves until its day ends. Frozen: every caller shares it.
const lastPeriods = new Map<string, Readonly<Periods>>();

export function periodsAt(at: number, zone: string): Periods {
  const last = lastPeriods.get(zone);
  if (last && at >= last.dayStart && at < last.dayEnd) return last;
  const periods = Object.freeze(computePeriods(at, zone));
  if (lastPeriods.size >= 64) lastPeriods.clear();
  lastPeriods.set(zone, periods);
  return periods;
}

function computePeriods(at: number, zone: string): Periods {
  const p = parts(at, zone);
  const next = new Date(Date.UTC(p.y, p.m - 1, p.d + 1));
  const nextMonth = new Date(Date.UTC(p.y, p.m, 1));
  return {
    day: `${p.y}-${String(p.m).padStart(2, '0')}-${String(p.d).padStart(2, '0')}`,
    dayStart: localMidnight(p.y, p.m, p.d, zone),
    dayEnd: localMidnight(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), zone),
    monthStart: localMidnight(p.y, p.m, 1, zone),
    monthEnd: localMidnight(nextMonth.getUTCFullYear(), nextMonth.getUTCMonth() + 1, 1, zone),
  };
}

/** `YYYY-MM-DD` of `at` in `zone` (the day groups of `GET /usage`). */
export function dayOf(at: number, zone: string): string {
  return periodsAt(at, zone).day;
}
