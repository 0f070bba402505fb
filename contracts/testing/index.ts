/**
 * `@agt/contracts/testing`: boot an extension in a test, the way Backstage's `startTestBackend` does.
 *
 * - {@link startTestExtension}: ONE extension against fake kernel services (settings, agents, inbox,
 *   bus, logger, contributions and extension points, all recorded), on a real fastify server on port 0
 *   that validates and answers errors and 503s as the daemon does. Fast; no agt needed.
 * - {@link startTestDaemon}: the real daemon on port 0 with a temporary data folder and a manifest
 *   naming the given extension modules. Needs the agt package (this checkout, or `agt` installed).
 * - {@link runContractSuite}: the checks every extension passes (loads, lists, 503 when off, stops in
 *   time, leaves nothing behind, survives its dependencies off and its handlers throwing), on that daemon.
 *
 * ```ts
 * import t from 'tap';
 * import { startTestExtension } from '@agt/contracts/testing';
 * import hello from '../src/index.js';
 *
 * t.test('lists greetings', async (t) => {
 *   const ext = await startTestExtension(hello, { config: { greeting: 'hey' } });
 *   t.teardown(ext.stop);
 *   const res = await ext.request('GET', '/hello');
 *   t.equal(res.status, 200);
 * });
 * ```
 */
export {
  startTestExtension,
  type TestExtension,
  type TestExtensionOptions,
  type TestExtensionState,
} from './test-extension.js';
export { runContractSuite, STOP_WITHIN_MS, type ContractCheck, type ContractSuiteExtension } from './contract-suite.js';
export { startTestDaemon, type TestDaemon, type TestDaemonExtension, type TestDaemonOptions } from './test-daemon.js';
export {
  offer,
  recordingLogger,
  type AgentLogRow,
  type Delivery,
  type LogLine,
  type PointOffer,
  type RecordedContributions,
  type TestAgent,
} from './fake-kernel.js';
export type { TestRequest, TestResponse } from './http-client.js';
