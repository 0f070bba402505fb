/** The Network route group under `/network`, on the daemon's own API (bearer token, guards). */
import { Type } from 'typebox';
import type { ExtensionHttp } from '@agt/contracts';
import type { AgentsService, SettingsService } from '@agt/contracts';
import { endpointsOf } from './cards.js';
import { meshAgents } from './directory.js';
import type { PeerDirectory } from './discovery.js';
import type { MeshServer } from './mesh-server.js';
import { visibilityOf } from './scope.js';

export const TAG = 'Network';

const MeshState = Type.Object({
  enabled: Type.Boolean({ description: 'setting `meshServerEnabled` (default true)' }),
  running: Type.Boolean(),
  host: Type.String({ description: 'the bound host, or the one it would bind' }),
  port: Type.Union([Type.Integer(), Type.Null()], { description: 'the bound port; null while not running' }),
  lan: Type.Boolean({ description: 'setting `meshLan`' }),
  urls: Type.Array(Type.String(), { description: 'base URLs of the mesh server' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'why the last listen failed' }),
});
const NetworkAgent = Type.Object({
  agentId: Type.String(),
  handle: Type.String({ description: 'the name in mesh URLs: the handle, else the id' }),
  did: Type.Union([Type.String(), Type.Null()]),
  visibility: Type.Union([Type.Literal('off'), Type.Literal('localhost'), Type.Literal('lan'), Type.Literal('public')]),
  cardUrl: Type.Union([Type.String(), Type.Null()]),
});
const NetworkState = Type.Object({ mesh: MeshState, agents: Type.Array(NetworkAgent) });
const Peer = Type.Object({
  name: Type.String(),
  url: Type.String(),
  source: Type.Union([Type.Literal('mdns'), Type.Literal('manual')]),
  seenAt: Type.Union([Type.Integer(), Type.Null()]),
});

export interface NetworkRouteDeps {
  server: MeshServer;
  peers: PeerDirectory;
  agents: AgentsService;
  settings: SettingsService;
}

export function registerNetworkRoutes(http: ExtensionHttp, deps: NetworkRouteDeps): void {
  const meshState = () => {
    const status = deps.server.status();
    const urls = status.url
      ? [...new Set([status.url, ...(status.host === '0.0.0.0' ? [`http://127.0.0.1:${status.boundPort}`] : [])])]
      : [];
    return {
      enabled: status.enabled,
      running: status.running,
      host: status.host,
      port: status.boundPort,
      lan: status.lan,
      urls,
      error: status.error,
    };
  };
  const networkState = () => {
    const mesh = meshState();
    return {
      mesh,
      agents: meshAgents(deps.agents).map((agent) => ({
        agentId: agent.view.id,
        handle: agent.handle,
        did: agent.did ?? null,
        visibility: visibilityOf(agent.view),
        cardUrl: mesh.urls[0] ? endpointsOf(mesh.urls[0], agent.handle).card : null,
      })),
    };
  };

  http.get(
    '/',
    { schema: { tags: [TAG], summary: 'The mesh server and the agents it serves', response: { 200: NetworkState } } },
    async () => networkState(),
  );

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    http.post(
      `/mesh/${action}`,
      {
        schema: {
          tags: [TAG],
          summary: `${action === 'enable' ? 'Turn on' : 'Turn off'} the mesh server (persists meshServerEnabled)`,
          response: { 200: Type.Object({ mesh: MeshState }) },
        },
      },
      async () => {
        deps.settings.update({ meshServerEnabled: enabled });
        await deps.server.reconcile();
        return { mesh: meshState() };
      },
    );
  }

  http.put(
    '/lan',
    {
      schema: {
        tags: [TAG],
        summary: 'Listen on all interfaces or loopback only (persists meshLan)',
        body: Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false }),
        response: { 200: Type.Object({ mesh: MeshState }) },
      },
    },
    async (request) => {
      deps.settings.update({ meshLan: request.body.enabled });
      await deps.server.reconcile();
      return { mesh: meshState() };
    },
  );

  http.get(
    '/peers',
    {
      schema: {
        tags: [TAG],
        summary: 'Mesh servers of other daemons: manual (setting meshPeers) and found by mDNS',
        response: { 200: Type.Object({ peers: Type.Array(Peer) }) },
      },
    },
    async () => ({ peers: deps.peers.list() }),
  );
}
