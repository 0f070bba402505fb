/**
 * `/compute`: the engine, the base image, this daemon's containers and the exec log. An unreachable
 * engine is reported by `GET /compute` (`engine.reachable: false`) and answers 503 `unavailable`, naming
 * its address, everywhere else.
 */
import { AgtError } from '@agt/contracts';
import { errorResponses } from '@agt/contracts';
import type { ExtensionHttp } from '@agt/contracts';
import type { Compute } from './compute.js';
import { buildImage, findBusybox, imagePresent } from './image.js';
import type { ComputeOptions } from './options.js';
import {
  ComputeStatus,
  ContainerInfo,
  ContainerParams,
  DestroyResult,
  ExecLogList,
  ExecLogQuery,
  SetupBody,
  SetupResult,
  TAG,
} from './schemas.js';

export interface RouteDeps {
  compute: Compute;
  options: ComputeOptions;
  busyboxCandidates: readonly string[];
  daemonKey: string;
}

export function registerRoutes(http: ExtensionHttp, deps: RouteDeps): void {
  const { compute, options } = deps;
  const tags = [TAG];

  http.get(
    '',
    {
      schema: {
        tags,
        summary: "The engine, the base image (and what is missing to run commands) and this daemon's containers",
        description:
          'Answers without the engine too (`engine.reachable: false`, `missing` names it); the other compute routes answer 503 `unavailable` then.',
        response: { 200: ComputeStatus, ...errorResponses(502, 503) },
      },
    },
    async () => {
      const { memoryMb, cpus, pids, defaultTimeoutMs, maxTimeoutMs } = options;
      const limits = { memoryMb, cpus, pids, defaultTimeoutMs, maxTimeoutMs };
      const busybox = (await findBusybox(deps.busyboxCandidates)) ?? null;
      const host = compute.engine.address.label;
      let version: string;
      try {
        version = await compute.engine.version();
      } catch (error) {
        // The one compute route that answers without the engine: it is the place to learn that it is missing.
        if (!(error instanceof AgtError && error.code === 'unavailable')) throw error;
        const missing = ['engine', ...(busybox ? [] : ['busybox'])];
        return {
          engine: { reachable: false, version: null, host },
          image: { name: options.image, present: false, busybox },
          missing,
          limits,
          containers: [],
        };
      }
      const [present, containers] = await Promise.all([
        imagePresent(compute.engine, options.image),
        compute.containers.list(),
      ]);
      const missing = [...(present ? [] : ['image']), ...(present || busybox ? [] : ['busybox'])];
      return {
        engine: { reachable: true, version, host },
        image: { name: options.image, present, busybox },
        missing,
        limits,
        containers,
      };
    },
  );

  http.post(
    '/setup',
    {
      schema: {
        tags,
        summary: "Build the base image from the host's static busybox (no registry needed)",
        description:
          '503 `unavailable` when the engine does not answer or no static busybox is found (install busybox-static).',
        body: SetupBody,
        response: { 200: SetupResult, ...errorResponses(502, 503) },
      },
      // `curl -X POST .../compute/setup` sends no body at all: that is `{}` (build when missing), not a 400.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
    },
    async (request) => {
      await compute.engine.version();
      if (!request.body?.rebuild && (await imagePresent(compute.engine, options.image))) {
        return { image: options.image, built: false, busybox: (await findBusybox(deps.busyboxCandidates)) ?? null };
      }
      const busybox = await buildImage(compute.engine, options.image, deps.busyboxCandidates, deps.daemonKey);
      return { image: options.image, built: true, busybox };
    },
  );

  http.get(
    '/containers/:name',
    {
      schema: {
        tags,
        summary: "One of this daemon's containers",
        params: ContainerParams,
        response: { 200: ContainerInfo, ...errorResponses(404, 409, 502, 503) },
      },
    },
    async (request) => compute.containers.get(request.params.name),
  );

  http.post(
    '/containers/:name/start',
    {
      schema: {
        tags,
        summary: 'Start a stopped container',
        params: ContainerParams,
        response: { 200: ContainerInfo, ...errorResponses(404, 409, 502, 503) },
      },
    },
    async (request) => compute.containers.start(request.params.name),
  );

  http.post(
    '/containers/:name/stop',
    {
      schema: {
        tags,
        summary: 'Stop a container (what runs in it is killed); the next exec starts it again',
        params: ContainerParams,
        response: { 200: ContainerInfo, ...errorResponses(404, 409, 502, 503) },
      },
    },
    async (request) => compute.containers.stop(request.params.name),
  );

  http.post(
    '/containers/:name/destroy',
    {
      schema: {
        tags,
        summary:
          'Remove a container and its work volume (the files its agents kept there are gone); the next exec creates it anew',
        params: ContainerParams,
        response: { 200: DestroyResult, ...errorResponses(404, 409, 502, 503) },
      },
    },
    async (request) => {
      await compute.containers.destroy(request.params.name);
      return { success: true };
    },
  );

  http.get(
    '/exec-log',
    {
      schema: {
        tags,
        summary: 'The last execs (compute_exec calls and command targets), newest first, kept in memory per agent',
        querystring: ExecLogQuery,
        response: { 200: ExecLogList, ...errorResponses() },
      },
    },
    async (request) => ({ entries: compute.log.list(request.query.agentId, request.query.limit ?? 100) }),
  );
}
