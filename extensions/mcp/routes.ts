/**
 * `/mcp`: the daemon-wide registrations (settings `mcpServers`), the open servers of loaded
 * agents, and the npm packages installed in the data directory's `mcp-servers/`. A registration or
 * package change applies at an agent's next load, or at once through its restart route.
 */
import { errorResponses } from '@agt/contracts';
import type { ExtensionHttp } from '@agt/contracts';
import type { SettingsService } from '@agt/contracts';
import type { McpManager } from './agent-servers.js';
import { isRefusedEnvName } from './child-env.js';
import {
  refusedVariable,
  registrationExists,
  registrationIncomplete,
  registrationMissing,
  workFolderNeedsStdio,
} from './errors.js';
import type { McpPackages } from './packages.js';
import {
  InstallAnswer,
  InstallBody,
  InstallRunning,
  NameParams,
  Overview,
  PackageList,
  PackageQuery,
  PackageRemoved,
  RegistrationAnswer,
  RegistrationBody,
  Removed,
  TAG,
} from './schemas.js';

const REQUIRED = { npm: 'npmPackage', command: 'command', http: 'url' } as const;

export function registerMcpRoutes(
  http: ExtensionHttp,
  settings: SettingsService,
  manager: McpManager,
  packages: McpPackages,
  installWaitMs: number,
  /** A registration was removed: what was kept for it (its sign-in) goes too. */
  removed: (name: string) => Promise<void> = async () => {},
): void {
  const registrations = () => settings.current().mcpServers ?? [];

  http.get('', {
    schema: {
      tags: [TAG],
      summary: 'MCP registrations and open servers',
      response: { 200: Overview, ...errorResponses() },
    },
    handler: async () => ({ registrations: [...registrations()], servers: manager.allServers() }),
  });

  http.post('/servers', {
    schema: {
      tags: [TAG],
      summary: 'Register an MCP server',
      description:
        'Adds to settings `mcpServers`. Secrets never go here: name variables in `envFrom` / `headerEnv`, or use agent credentials `mcp:<server>:<KEY>`.',
      body: RegistrationBody,
      response: { 201: RegistrationAnswer, ...errorResponses(409) },
    },
    handler: async (request, reply) => {
      const body = request.body;
      const field = REQUIRED[body.type];
      if (!body[field]) throw registrationIncomplete(body.name, body.type, field);
      if (body.oauth && body.type !== 'http') throw registrationIncomplete(body.name, 'oauth', 'type http');
      if (body.exposeWorkFolder && body.type === 'http') throw workFolderNeedsStdio(body.name);
      if (body.sandbox && body.type === 'http') throw workFolderNeedsStdio(body.name, 'sandbox');
      // The schema's key pattern does not bind record keys: check every variable name here.
      for (const [where, names] of [
        ['env', Object.keys(body.env ?? {})],
        ['envFrom', [...Object.keys(body.envFrom ?? {}), ...Object.values(body.envFrom ?? {})]],
        ['headerEnv', Object.values(body.headerEnv ?? {})],
        ['allowAgentEnv', body.allowAgentEnv ?? []],
      ] as const) {
        const refused = names.find(isRefusedEnvName);
        if (refused) throw refusedVariable(where, refused);
      }
      if (registrations().some((r) => r.name === body.name)) throw registrationExists(body.name);
      settings.update({ mcpServers: [...registrations(), body] });
      reply.code(201);
      return { registration: body };
    },
  });

  http.delete('/servers/:name', {
    schema: {
      tags: [TAG],
      summary: 'Remove an MCP server registration',
      params: NameParams,
      response: { 200: Removed, ...errorResponses(404) },
    },
    handler: async (request) => {
      const { name } = request.params;
      if (!registrations().some((r) => r.name === name)) throw registrationMissing(name);
      settings.update({ mcpServers: registrations().filter((r) => r.name !== name) });
      await removed(name);
      return { name, removed: true as const };
    },
  });

  http.get('/packages', {
    schema: {
      tags: [TAG],
      summary: 'Installed MCP server packages',
      response: { 200: PackageList, ...errorResponses() },
    },
    handler: async () => ({ dir: packages.dir, packages: packages.list(), operations: packages.recent() }),
  });

  http.post('/packages', {
    schema: {
      tags: [TAG],
      summary: 'Install an MCP server package with npm',
      description:
        "Into the data directory's `mcp-servers/` (`--ignore-scripts`); a `type: npm` registration then runs it with node. `package` is a name, `name@version`, or a local tarball or folder. " +
        '201 with the package when npm finishes within `installWaitMs`; else 202 with the running operation (it goes on; `GET /mcp/packages` shows how it ended). 422 `install_failed` when npm fails (its reason in the message), 409 while another install runs.',
      body: InstallBody,
      response: { 201: InstallAnswer, 202: InstallRunning, ...errorResponses(409, 422) },
    },
    handler: async (request, reply) => {
      const work = packages.install(request.body.package);
      let timer: NodeJS.Timeout | undefined;
      const waited = await Promise.race([
        work,
        new Promise<undefined>((done) => (timer = setTimeout(() => done(undefined), installWaitMs))),
      ]).finally(() => clearTimeout(timer));
      if (waited) {
        reply.code(201);
        return { package: waited };
      }
      // Still running: its end is recorded (and logged) by the operation; nothing awaits the promise now.
      work.catch(() => {});
      reply.code(202);
      return { operation: packages.recent()[0]! };
    },
  });

  http.delete('/packages', {
    schema: {
      tags: [TAG],
      summary: 'Uninstall an MCP server package',
      querystring: PackageQuery,
      response: { 200: PackageRemoved, ...errorResponses(404, 409, 422) },
    },
    handler: async (request) => {
      await packages.remove(request.query.package);
      return { package: request.query.package, removed: true as const };
    },
  });
}
