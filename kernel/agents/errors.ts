/**
 * The coded errors of agent files, the registry and agent creation, one factory per meaning (the model
 * is fastify's `lib/errors.js`). Statuses come from `ERROR_STATUS` in `contracts/errors.ts`; codes,
 * messages and details (with their key order) are API. The stores' errors are in `stores/errors.ts`.
 */
import type { AgentCandidate } from '../http-api/agents-api.js';
import { AgtError } from '@agt/contracts';
import type { LeaseRow } from './stores/lease-store.js';

/** Why a file cannot be opened as an agent file (`details.reason` of the 422 `load_failed`). */
export type OpenFailure =
  | 'not_a_file'
  | 'corrupt'
  | 'foreign'
  | 'newer'
  | 'migration_failed'
  | 'no_config'
  | 'unsafe_schema';

// ---- agent files ---------------------------------------------------------------------------------

/** 422 `load_failed`: the file cannot be opened as an agent file, for `reason` (`message` says more). */
export const loadFailed = (
  filePath: string,
  reason: OpenFailure,
  message: string,
  cause?: unknown,
  details: Record<string, unknown> = {},
) => new AgtError('load_failed', `${filePath}: ${message}`, { details: { ...details, reason, filePath }, cause });

/** 409 `agent_file_in_use` (reason `locked`): another process holds the file's SQLite lock. */
export const agentFileLocked = (filePath: string, cause?: unknown) =>
  new AgtError(
    'agent_file_in_use',
    `${filePath} is locked by another process (the database stayed locked past the busy timeout); close the program using it and try again`,
    { details: { reason: 'locked', filePath }, cause },
  );

/** 409 `agent_file_in_use` (reason `leased`): another agt daemon holds the file's lease. */
export const agentFileLeased = (filePath: string, holder: Pick<LeaseRow, 'pid' | 'host' | 'heartbeat_at'>) =>
  new AgtError(
    'agent_file_in_use',
    `${filePath} is in use by another agt daemon (pid ${holder.pid} on ${holder.host}, heartbeat ${new Date(holder.heartbeat_at).toISOString()})`,
    {
      details: {
        reason: 'leased',
        filePath,
        holder: { pid: holder.pid, host: holder.host, heartbeatAt: holder.heartbeat_at },
      },
    },
  );

/** 400 `bad_request`: an agent file is opened or created by a relative path. */
export const agentPathNotAbsolute = (filePath: string) =>
  new AgtError('bad_request', `agent file path must be absolute: ${filePath}`);

/** 404 `not_found`: no file at the agent file path. */
export const agentFileNotFound = (filePath: string) => new AgtError('not_found', `agent file not found: ${filePath}`);

/** 409 `conflict`: a new agent file would overwrite an existing file. */
export const agentFileExists = (filePath: string) => new AgtError('conflict', `file already exists: ${filePath}`);

// ---- registry ------------------------------------------------------------------------------------

/** 400 `bad_request`: the `filePath` of a load or review request is relative. */
export const filePathNotAbsolute = (filePath: string) =>
  new AgtError('bad_request', `filePath must be absolute: ${filePath}`);

/** 404 `not_found`: no loaded agent has this id, handle or name. */
export const agentNotLoaded = (ref: string) => new AgtError('not_found', `no loaded agent "${ref}"`);

/** 404 `not_found`: no loaded agent has this id (services that take an id, never a name). */
export const agentIdNotLoaded = (agentId: string) => new AgtError('not_found', `agent ${agentId} is not loaded`);

/** 503 `unavailable`: no loaded agent `ref`, and no extension offers an agent locator (start by id or name). */
export const noAgentLocator = (ref: string) =>
  new AgtError(
    'unavailable',
    `no loaded agent ${ref}: finding agents by id, handle or name needs the tracked-folders extension (or pass the absolute file path)`,
    {
      details: { extension: 'tracked-folders' },
    },
  );

/** 404 `not_found`: no loaded agent `ref`, and the agent locator found no file either. */
export const agentNotLocated = (ref: string) =>
  new AgtError('not_found', `no agent ${ref} is loaded or found in the tracked folders`);

/** The candidates named in an ambiguity's message, so a terminal shows which to pick (all are in `details`). */
const SHOWN_CANDIDATES = 10;
const listed = (items: string[]) =>
  items.slice(0, SHOWN_CANDIDATES).join(', ') +
  (items.length > SHOWN_CANDIDATES ? `, and ${items.length - SHOWN_CANDIDATES} more` : '');

/** 409 `ambiguous_agent`: the agent locator found several files for `ref`. */
export const ambiguousAgentFiles = (
  ref: string,
  candidates: Array<{ name: string; handle: string | null; filePath: string }>,
) =>
  new AgtError(
    'ambiguous_agent',
    `${candidates.length} agent files match ${ref}; start one by its absolute path: ${listed(candidates.map((c) => c.filePath))}`,
    {
      details: { candidates },
    },
  );

/** 409 `ambiguous_agent`: a handle or name matches several loaded agents. */
export const ambiguousAgent = (ref: string, candidates: AgentCandidate[]) =>
  new AgtError(
    'ambiguous_agent',
    `"${ref}" matches ${candidates.length} loaded agents; use the id: ${listed(candidates.map((c) => `${c.id} (${c.filePath})`))}`,
    { details: { candidates } },
  );

/** 409 `conflict`: an agent with this id is loaded (or loading) from another file (`otherPath` null). */
export const agentAlreadyLoaded = (agentId: string, otherPath: string | null) =>
  new AgtError(
    'conflict',
    `agent ${agentId} is already loaded${otherPath ? ` from ${otherPath}` : ' (loading from another file)'}`,
    {
      details: { agentId, filePath: otherPath },
    },
  );

/**
 * 409 `agent_id_conflict`: the file claims the id of an agent this daemon knows with another key (DID and
 * sealed key); it may come in only `asNew`, under a fresh id (docs/agent-identity.md).
 */
export const agentIdConflict = (agentId: string, filePath: string, knownDid: string | null, fileDid: string | null) =>
  new AgtError(
    'agent_id_conflict',
    `${filePath} claims the id ${agentId}, which this daemon knows with another key (${knownDid ?? 'no identity'}; the file has ${fileDid === knownDid ? 'the same DID without its key' : (fileDid ?? 'no identity')}); load it asNew to give it an id of its own`,
    { details: { agentId, filePath, knownDid, fileDid } },
  );

/** 403 `AGENT_REVIEW_REQUIRED`: the file's config has not been reviewed on this machine. */
export const reviewRequired = (agentId: string, filePath: string) =>
  new AgtError('AGENT_REVIEW_REQUIRED', `agent file ${filePath} has not been reviewed on this machine`, {
    details: { agentId, filePath },
  });

/** 422 `load_failed` (reason `invalid_config`): the stored config does not match the schema. */
export const storedConfigInvalid = (filePath: string, problem: string) =>
  new AgtError('load_failed', `${filePath}: invalid agent config: ${problem}`, {
    details: { reason: 'invalid_config', filePath, path: problem.split(':')[0] },
  });

/** 422 `load_failed` (reason `secret_in_config`): the stored config holds a secret value at `path`. */
export const storedConfigHoldsSecret = (filePath: string, what: string, path: string) =>
  new AgtError('load_failed', `${filePath}: the agent config holds a secret value at ${what}`, {
    details: { reason: 'secret_in_config', filePath, path },
  });

/** 422 `load_failed` (reason `attach_failed`): the runtime could not take the agent on. */
export const attachFailed = (filePath: string, error: unknown) =>
  new AgtError('load_failed', `${filePath}: ${(error as Error).message}`, {
    details: { reason: 'attach_failed', filePath },
    cause: error,
  });

/** 400 `bad_request`: a config change is refused at `path` (`problem` starts with the path). */
export const invalidConfig = (problem: string, path: string | undefined) =>
  new AgtError('bad_request', `Invalid config: ${problem}`, { details: { path } });

/** 400 `bad_request`: a config nests deeper than `maxDepth` levels. */
export const configTooDeep = (maxDepth: number) =>
  new AgtError('bad_request', `the config nests deeper than ${maxDepth} levels`);

/** 400 `bad_request`: a tracked folder to autostart from is a relative path. */
export const trackedDirNotAbsolute = (dir: string) =>
  new AgtError('bad_request', `trackedDirs must be absolute paths: ${dir}`);

/** 400 `bad_request`: inbox delivery of a `user` message (that is chat). */
export const userSourceInInbox = () =>
  new AgtError('bad_request', 'inbox messages cannot have source "user" (use chat)');

// ---- agent creation ------------------------------------------------------------------------------

/** 400 `password_required`: the template asks for a password-protected agent and none was sent. */
export const passwordRequired = (templateId: string) =>
  new AgtError('password_required', `template "${templateId}" requires a password-protected agent: send \`password\``, {
    details: { templateId },
  });

/** 403 `wrong_password`: `passwordConfirm` differs from `password`. */
export const passwordMismatch = () => new AgtError('wrong_password', 'passwordConfirm does not match password');

/** 409 `name_taken`: the directory holds a file named `<slug>.agt` already. */
export const agentNameTaken = (name: string, slug: string, directory: string) =>
  new AgtError('name_taken', `an agent file named "${slug}.agt" already exists in ${directory}`, {
    details: { name, directory },
  });

/** 400 `bad_request`: the directory cannot hold an agent file (read-only, a pseudo filesystem). */
export const cannotCreateAgentFile = (directory: string, error: unknown) =>
  new AgtError('bad_request', `cannot create an agent file in ${directory}: ${(error as Error).message}`, {
    details: { directory },
    cause: error,
  });

/** 422 `load_failed`: the new agent file was written but did not load (`reason`: the load error's code). */
export const createdButNotLoaded = (agentId: string, filePath: string, reason: string, error: unknown) =>
  new AgtError(
    'load_failed',
    `the agent file was created at ${filePath} but could not be loaded: ${(error as Error).message}`,
    {
      details: { agentId, filePath, reason },
      cause: error,
    },
  );
