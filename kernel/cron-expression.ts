/**
 * Cron expressions: checking one of settings (`backups.every`: kernel/settings.ts validates with it),
 * and the `cron` package itself (outside the bundle), loaded when a cron expression is first read rather than at start:
 * `cron` brings luxon, ~117 KB of JavaScript to compile and run that a daemon without a
 * cron timer or scheduled backup never needs. Node's own `require`, so reading stays synchronous.
 */
import { createRequire } from 'node:module';
import type { CronTime as CronTimeClass } from 'cron';

let loaded: typeof CronTimeClass | undefined;

/** The `CronTime` class of the `cron` package. */
export function cronTime(): typeof CronTimeClass {
  loaded ??= (createRequire(import.meta.url)('cron') as typeof import('cron')).CronTime;
  return loaded;
}

/** The problem of a cron expression, or null when it parses. */
export function cronProblem(expression: string, timezone?: string): string | null {
  try {
    new (cronTime())(expression, timezone);
    return null;
  } catch (error) {
    return `${expression}: ${(error as Error).message}`;
  }
}
