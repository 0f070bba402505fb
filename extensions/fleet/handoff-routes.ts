/**
 * `POST /fleet/handoff` and `POST /fleet/takeover`: the two steps of a planned move without a shared file
 * system (handoff.ts), which `POST /fleet/move` runs as the owner on the holder and on the target through the
 * fleet's request/reply. The owner may run them by hand too (a handoff alone leaves the agent stopped, its
 * final copy on the replica stream, until a takeover on some daemon).
 */
import { errorResponses, type ExtensionHttp } from '@agt/contracts';
import { Type } from 'typebox';
import { fleetNotConfigured } from './errors.js';
import type { Fleet } from './fleet.js';
import { TAG } from './routes.js';

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$', description: "SHA-256 of the agent's final copy, hex" });

export function registerHandoffRoutes(http: ExtensionHttp, fleet: () => Fleet | undefined): void {
  const tags = [TAG];
  const need = (): Fleet => {
    const current = fleet();
    if (!current) throw fleetNotConfigured();
    return current;
  };

  http.post(
    '/handoff',
    {
      schema: {
        tags,
        summary:
          "A move's first step, on the daemon that runs the agent: unload it, store its closed file as its final copy, give its placement back",
        description:
          "Needs option `replicate`. The placement stays this daemon's through the unload (a running turn gets the usual 5 s grace) until the closed file is stored on the replica stream as the agent's newest copy, with the turn ends not yet on the fleet stream: no daemon takes the agent over from an older copy meanwhile. When a step after the unload fails, the agent is loaded back here and the error says `restored`. 404 when this daemon does not run the agent; 409 `replication_off`; 503 when NATS cannot be reached.",
        body: Type.Object({
          agent: Type.String({ minLength: 1, maxLength: 512, description: 'id, handle or name' }),
        }),
        response: {
          200: Type.Object({
            agentId: Type.String(),
            sha256: Sha256,
            bytes: Type.Integer(),
            schemaVersion: Type.Integer({ description: 'the agent-file schema version of the copy' }),
            ends: Type.Integer({ description: 'turn ends the copy carries (not yet on the fleet stream)' }),
          }),
          ...errorResponses(404, 409, 503),
        },
      },
    },
    async (request) => need().handoffs.handOff(request.body.agent),
  );

  http.post(
    '/takeover',
    {
      schema: {
        tags,
        summary: "A move's second step, on the target: restore the agent's copy from the replica stream and load it",
        description:
          'Needs option `replicate`. The copy is checked (its SHA-256; with `sha256`, exactly that copy, else 409 `replica_changed`), its carried turn ends are published, then it is restored as a backup into `<data dir>/fleet-agents/` and loaded, which claims the placement (409 `agent_held_elsewhere`, `daemon_draining`). 404 when the fleet holds no copy of the agent; 409 `replication_off`; 422 `replica_damaged` or `backup_invalid`; 503 when NATS cannot be reached.',
        body: Type.Object({
          agentId: Type.String({ minLength: 1, maxLength: 512, description: "the agent's id" }),
          sha256: Type.Optional(Sha256),
        }),
        response: {
          200: Type.Object({
            agentId: Type.String(),
            filePath: Type.String({ description: "the agent's file on this daemon" }),
            bytes: Type.Integer(),
          }),
          ...errorResponses(404, 409, 422, 503),
        },
      },
    },
    async (request) => need().handoffs.takeOver(request.body.agentId, request.body.sha256),
  );
}
