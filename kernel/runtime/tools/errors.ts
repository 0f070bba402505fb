/**
 * The coded errors of the built-in tools, one factory per meaning (the model is fastify's `lib/errors.js`).
 * A tool's error reaches the model as the tool result; codes, messages and details are API all the same.
 */
import { AgtError } from '@agt/contracts';

/** 503 `unavailable`: a tool was called for an agent whose runtime is gone. */
export const toolAgentNotRunning = (agentId: string) => new AgtError('unavailable', `agent ${agentId} is not running`);

/** 403 `forbidden`: an agent's own config patch breaks an owner lock (`problem` names it). */
export const ownerLockRefusal = (problem: string) => new AgtError('forbidden', `owner lock: ${problem}`);

// ---- sys_fetch -----------------------------------------------------------------------------------

/** 400 `bad_request`: `sys_fetch` got something that does not parse as a URL. */
export const notAUrl = (url: string) => new AgtError('bad_request', `not a URL: ${url}`);

/** 400 `bad_request`: `sys_fetch` (or a redirect) names a scheme other than http and https. */
export const onlyHttpUrls = () => new AgtError('bad_request', 'only http and https URLs');

/** 400 `bad_request`: a GET or HEAD request with a body. */
export const bodyNotAllowed = (verb: string) => new AgtError('bad_request', `a ${verb} request cannot have a body`);

/** 400 `bad_request`: a header name or value that is not valid HTTP. */
export const invalidHeader = (name: string) => new AgtError('bad_request', `invalid header ${JSON.stringify(name)}`);

/** 403 `forbidden`: the destination address is refused (loopback, private, ...; `message` says which). */
export const addressRefused = (message: string) => new AgtError('forbidden', message);

/** 502 `upstream_error`: the request to `origin` failed (`reason`: the error, or the timeout). */
export const fetchFailed = (origin: string, reason: string) =>
  new AgtError('upstream_error', `fetch ${origin} failed: ${reason}`);

// ---- files, meta, loops, messages ----------------------------------------------------------------

/** 404 `not_found`: the agent stores no file at `path`. */
export const noStoredFile = (path: string) => new AgtError('not_found', `no file ${path}`);

/** 413 `payload_too_large`: a stored file holds at most `max` bytes. */
export const storedFileTooLarge = (max: number) => new AgtError('payload_too_large', `files hold at most ${max} bytes`);

/** 404 `not_found`: the agent has no meta key `key`. */
export const noMetaKey = (key: string) => new AgtError('not_found', `no meta key ${key}`);

/** 404 `not_found`: the agent has no loop `loop` (a timer's target). */
export const noLoop = (loop: string) => new AgtError('not_found', `no loop ${loop}`);

/** 400 `bad_request`: a loop sent a message to itself. */
export const cannotSendToSelf = () => new AgtError('bad_request', 'a loop cannot send to itself');

/** 400 `bad_request`: a loop tried to clear its own history mid-turn. */
export const cannotClearOwnLoop = () => new AgtError('bad_request', 'a loop cannot clear its own history mid-turn');

/** 400 `bad_request`: a loop tried to compact its own history mid-turn. */
export const cannotCompactOwnLoop = () =>
  new AgtError(
    'bad_request',
    'a loop cannot compact its own history mid-turn; compact another loop, or ask the owner (POST compact)',
  );

/** 403 `forbidden`: the agent's `messaging.mode` is `listen_only`. */
export const listenOnly = () => new AgtError('forbidden', 'messaging.mode is listen_only: this agent does not send');

/** 404 `not_found`: no message with this id in the agent's inbox or outbox (`box`). */
export const noMessage = (box: 'inbox' | 'outbox', id: number) => new AgtError('not_found', `no ${box} message ${id}`);
