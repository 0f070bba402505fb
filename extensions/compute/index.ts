/**
 * The `compute` extension (docs/compute.md): agents' shell commands in real containers through the
 * Docker engine. It contributes the `compute_exec` tool, offers the kernel's command executor (so
 * system-scope `command` targets run in the agent's container too), serves `/compute`, stops an
 * agent's isolated container when the agent unloads, and at shutdown stops the containers it started.
 * dockerode loads on the first engine call, so importing this module stays cheap.
 */
import { join } from 'node:path';
import { defineExtension } from '@agt/contracts';
import { commandExecutor } from '@agt/contracts';
import { Compute } from './compute.js';
import { Containers } from './containers.js';
import { Engine, engineAddress } from './engine.js';
import { ExecLog } from './exec-log.js';
import { BUSYBOX_CANDIDATES } from './image.js';
import { daemonKeyOf } from './labels.js';
import { ComputeOptions } from './options.js';
import { registerRoutes } from './routes.js';
import { TAG } from './schemas.js';
import { computeExecTool } from './tool.js';
import { UidTable } from './uids.js';

export default defineExtension({
  name: 'compute',
  version: '1.0.0',
  contract: '1.0',
  prefix: '/compute',
  routeGroups: [TAG],
  options: ComputeOptions,
  register(ctx) {
    const options = ctx.config;
    const engine = new Engine(engineAddress(options.dockerHost ?? ctx.env.get('DOCKER_HOST')), options.engineTimeoutMs);
    const daemonKey = daemonKeyOf(ctx.settings.dataDir);
    const containers = new Containers(engine, daemonKey, options, ctx.logger);
    const uids = new UidTable(join(ctx.settings.dataDir, 'compute', 'uids.json'));
    const compute = new Compute(ctx, engine, containers, uids, new ExecLog(options.execLogSize));
    const busyboxCandidates = options.busybox ? [options.busybox] : BUSYBOX_CANDIDATES;

    registerRoutes(ctx.http, { compute, options, busyboxCandidates, daemonKey });
    const tool = computeExecTool(compute, options);
    ctx.contribute.tools({ toolsFor: () => [tool] });
    ctx.provide(commandExecutor, {
      async run(run) {
        // `host`: the kernel's own runner, once the owner allowed it; containers otherwise.
        if (compute.tierFor(run.agentId).tier === 'host') return undefined;
        return compute.run({ ...run, origin: 'command' });
      },
    });
    ctx.contribute.lifecycle({
      async unloaded(agent) {
        await containers
          .stopAgent(agent.id)
          .catch((error) =>
            ctx.logger.warn({ err: error, agentId: agent.id }, "compute: could not stop the agent's container"),
          );
      },
    });

    return {
      async start() {
        // What the last run left: reported, and running ones are this run's to stop. An engine that is
        // down now is not an error: routes and execs say so when asked.
        try {
          const found = await containers.adopt();
          if (found.length > 0)
            ctx.logger.info(
              { containers: found.map((info) => `${info.name} (${info.state})`) },
              "compute: found this daemon's containers",
            );
        } catch (error) {
          // One line, no stack: an engine that is not there is a state, not a bug.
          ctx.logger.warn(
            { reason: error instanceof Error ? error.message : String(error) },
            'compute: the engine is not reachable now',
          );
        }
      },
      async stop() {
        await containers.shutdown();
        engine.close();
      },
    };
  },
});
