/** The `mcp` extension's coded errors (mapped to the `{error, code}` body by the kernel). */
import { AgtError, conflict, notFound } from '@agt/contracts';

export const agentNotLoaded = (id: string) => notFound(`agent ${id} is not loaded`);
export const serverNotDeclared = (agentId: string, name: string) =>
  notFound(`agent ${agentId} declares no MCP server ${name}`);
export const toolNotFound = (server: string, tool: string) =>
  notFound(`MCP server ${server} has no tool ${tool} waiting to be re-enabled`);
export const registrationExists = (name: string) =>
  conflict(`an MCP server named ${name} is already registered (DELETE /mcp/servers/${name} first)`);
export const registrationMissing = (name: string) => notFound(`no MCP server registration named ${name}`);
export const nothingToReview = (name: string) =>
  notFound(`no changed tool definition of MCP server ${name} waits for review`);
export const registrationIncomplete = (name: string, type: string, field: string) =>
  new AgtError('bad_request', `MCP registration ${name} of type ${type} needs ${field}`, {
    details: { path: `/${field}` },
  });
export const refusedVariable = (where: string, name: string) =>
  new AgtError(
    'bad_request',
    `${where}: variable ${name} is refused (AGT_*, NODE_OPTIONS, LD_* and DYLD_* never reach an MCP server)`,
    { details: { path: `/${where}` } },
  );
export const packageMissing = (spec: string) => notFound(`MCP package ${spec} is not installed`);
/** 422: the request was understood, but npm could not install (or remove) the package. */
export const installFailed = (spec: string, why: string) =>
  new AgtError('install_failed', `npm could not install ${spec}: ${why}`, { status: 422 });
export const installBusy = () => conflict('another MCP package install or removal is running; try again when it ends');
export const extensionStopping = () => new AgtError('unavailable', 'the mcp extension is stopping');

/** A tool call that could not be answered: the message is what the model reads. */
export const callFailed = (server: string, tool: string, why: string) =>
  new AgtError('upstream_error', `MCP server ${server} could not run ${tool}: ${why}`);

/** 502: the server or its authorization server would not let a sign-in start or finish. */
export const signInFailed = (server: string, why: string) =>
  new AgtError('upstream_error', `sign-in to MCP server ${server}: ${why}`);
export const notOAuth = (name: string, why = 'an http registration with oauth') =>
  conflict(`MCP server ${name} is not registered for that OAuth sign-in (${why})`);
export const noSecretStore = () => new AgtError('unavailable', 'this daemon offers no sealed store for sign-in tokens');
export const workFolderNeedsStdio = (name: string, field: 'exposeWorkFolder' | 'sandbox' = 'exposeWorkFolder') =>
  new AgtError(
    'bad_request',
    `MCP registration ${name}: ${field} is for a server run here (type npm or command), not type http`,
    { details: { path: `/${field}` } },
  );

/**
 * A server answered that the sign-in lacks scopes (403 `insufficient_scope`): only a new sign-in, which
 * the owner consents to in a browser, can grant them. `scope` is the union to ask for.
 */
export const signInRequired = (server: string, scope: string, agentId?: string) =>
  new AgtError(
    'mcp_signin_required',
    `mcp_signin_required: MCP server ${server} needs a sign-in with more scopes (${scope}); the owner signs in again with agt mcp login ${server}${agentId !== undefined ? ` --agent ${agentId}` : ''}, then the call can be made again`,
    { status: 403, details: { server, scope, ...(agentId !== undefined ? { agentId } : {}) } },
  );
export const agentNotForRegistration = (name: string, needed: boolean) =>
  new AgtError(
    'bad_request',
    needed
      ? `MCP server ${name} is signed in to per agent (oauth.signIn per-agent): name the agent (?agent=<id>, agt mcp login ${name} --agent <id>)`
      : `MCP server ${name} is signed in to by the owner for every agent: no agent goes with its sign-in`,
  );
export const agentMissing = (ref: string) => notFound(`no loaded agent ${ref}`);
