/** Small parsers of command-line values shared by the command modules (a bad value is a usage error, exit 2). */
import { CliError, EXIT } from '../errors.js';

/** `NAME=value` pairs to an object (the value may hold `=`). */
export function pairs(list: string[] | undefined, flag: string): Record<string, string> | undefined {
  if (!list?.length) return undefined;
  const out: Record<string, string> = {};
  for (const item of list) {
    const at = item.indexOf('=');
    if (at <= 0) throw new CliError(`${flag} takes NAME=value, got "${item}"`, EXIT.usage);
    out[item.slice(0, at)] = item.slice(at + 1);
  }
  return out;
}

/** A positive integer option. */
export function integer(value: string | undefined, flag: string, min = 1): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new CliError(`${flag} takes an integer >= ${min}, got "${value}"`, EXIT.usage);
  return n;
}

/** A JSON object given on the command line. */
export function jsonObject(text: string, flag: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CliError(`${flag} must be a JSON object`, EXIT.usage);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new CliError(`${flag} must be a JSON object`, EXIT.usage);
  return value as Record<string, unknown>;
}

/** Reads all of stdin (for secrets and file contents piped in). */
export async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}
