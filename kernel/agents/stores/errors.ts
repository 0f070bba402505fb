/**
 * The coded errors of an agent file's stores (meta, local tables, stored files), one factory per meaning
 * (the model is fastify's `lib/errors.js`). Codes, messages and details are API.
 */
import { AgtError } from '@agt/contracts';

// ---- meta ----------------------------------------------------------------------------------------

/** 404 `not_found`: the agent has no meta key `key` (owner routes). */
export const metaKeyNotFound = (key: string) => new AgtError('not_found', `no meta key "${key}"`);

/** 403 `forbidden`: the agent tried to change a key's protection. */
export const metaProtectionOwnerOnly = (key: string) =>
  new AgtError('forbidden', `meta "${key}": only the owner changes protection`);

/** 403 `forbidden`: the agent tried to write a `readonly` key. */
export const metaReadonly = (key: string) => new AgtError('forbidden', `meta "${key}" is readonly`);

/** 403 `forbidden`: the agent tried to write an `increment` key with a value not above `current`. */
export const metaIncrementOnly = (key: string, current: string) =>
  new AgtError('forbidden', `meta "${key}" can only be incremented (current ${current})`);

/** 403 `forbidden`: the agent tried to delete a protected key. */
export const metaProtected = (key: string, protection: string) =>
  new AgtError('forbidden', `meta "${key}" is protected (${protection})`);

/** 400 `bad_request`: a non-integer value for an `increment` key. */
export const metaNotInteger = (key: string) =>
  new AgtError('bad_request', `meta "${key}" has protection increment: the value must be an integer`);

/** 400 `bad_request`: a key holding a non-integer value cannot get protection `increment`. */
export const metaCannotBecomeIncrement = (key: string) =>
  new AgtError('bad_request', `meta "${key}" holds a non-integer value; it cannot become increment`);

// ---- local tables --------------------------------------------------------------------------------

/** 400 `bad_request`: only `local_*` tables and `agt_audit` are readable. */
export const tableNotReadable = (table: string) =>
  new AgtError('bad_request', 'Invalid table name: only local_* tables and agt_audit are readable', {
    details: { table },
  });

/** 400 `bad_request`: only `local_*` tables can be dropped. */
export const tableNotDroppable = (table: string) =>
  new AgtError('bad_request', 'Invalid table name: only local_* tables can be dropped', { details: { table } });

/** 404 `not_found`: a readable table name that does not exist in the file. */
export const tableNotFound = (table: string) => new AgtError('not_found', `no table ${table}`);

/** 504 `timeout`: walking a daemon table to `offset` passed the agent's SQL time limit. */
export const tableOffsetTimedOut = (offset: number, table: string) =>
  new AgtError(
    'timeout',
    `reaching offset ${offset} of ${table} took longer than the agent's SQL time limit (limits.sql_timeout_ms)`,
  );

// ---- stored files --------------------------------------------------------------------------------

/**
 * 400 `bad_request`: a stored file path that is not relative, `/`-separated and free of empty, `.` or `..` segments.
 */

// ---- stored files --------------------------------------------------------------------------------

/** 403 `forbidden`: the agent tried to change or delete a file the owner made `readonly`. */
export const storedFileReadonly = (path: string) =>
  new AgtError('forbidden', `file "${path}" is readonly (the owner protected it)`);

/** 404 `not_found`: the agent has no stored file at `path` (owner routes). */
export const storedFileNotFound = (path: string) => new AgtError('not_found', `no file "${path}"`);

/** 409 `conflict`: a rename onto a path that holds a file already. */
export const storedFileExists = (path: string) => new AgtError('conflict', `a file "${path}" exists already`);
