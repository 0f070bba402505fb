/**
 * Whether a time zone is known: kernel/settings.ts validates `timezone` with it, the spend calendar
 * (spend/calendar.ts) before using one. Beside settings.ts, so settings does not import spend/ (which
 * reaches agents/ and, through it, settings again: a folder loop).
 */

// Asked at every model call; building an Intl.DateTimeFormat each time was ~2% of a turn's CPU, so the
// answers are kept (at most 1,000 zones).
const knownZones = new Map<string, boolean>();

/** Whether `zone` is a time zone this runtime knows. */
export function validTimeZone(zone: string): boolean {
  let valid = knownZones.get(zone);
  if (valid === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
      valid = true;
    } catch {
      valid = false;
    }
    if (knownZones.size < 1000) knownZones.set(zone, valid);
  }
  return valid;
}
