/** Checking a cron expression of settings (`backups.every`): kernel/settings.ts validates with it. */
import { CronTime } from 'cron';

/** The problem of a cron expression, or null when it parses. */
export function cronProblem(expression: string, timezone?: string): string | null {
  try {
    new CronTime(expression, timezone);
    return null;
  } catch (error) {
    return `${expression}: ${(error as Error).message}`;
  }
}
