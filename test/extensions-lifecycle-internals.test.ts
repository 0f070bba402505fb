/**
 * Extension lifecycle inside the kernel: stop at most once however many shutdowns are asked at once,
 * `extension.state.changed` on stop, the registry's rows and the withdrawn contributions after it (seen
 * only in process, once the daemon has stopped), and `stopAll`'s rules over a fake registry. The order
 * and the hanging stop as a client sees them: extensions-lifecycle.test.ts.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UmbilicalEvent } from '../contracts/events.js';
import { ExtensionLifecycle } from '../kernel/extensions/lifecycle.js';
import { ExtensionRegistry, type ExtensionRecord } from '../kernel/extensions/registry.js';
import { bootDaemon, ROOT, tempDir } from './helpers/daemon.js';

const fixture = (name: string) => join(ROOT, 'test/fixtures/extensions', name, 'index.ts');
const lines = (file: string) => readFileSync(file, 'utf8').trim().split('\n');

t.test('dependency order at start, reverse order at stop, each stop once', async (t) => {
  const recordFile = join(tempDir(t), 'calls.log');
  const d = await bootDaemon(t, {
    extensions: {
      extensions: [
        { name: 'needs-hello', module: fixture('needs-hello'), config: { recordFile } },
        { name: 'hello', module: fixture('hello'), config: { recordFile } },
      ],
    },
  });
  t.same(lines(recordFile), ['hello:register', 'needs-hello:register', 'hello:start', 'needs-hello:start']);

  const events: UmbilicalEvent[] = [];
  d.daemon.kernel.bus.subscribe((event) => events.push(event));
  await Promise.all([d.daemon.shutdown('test'), d.daemon.shutdown('again')]);
  await d.daemon.shutdown('and again');
  t.same(lines(recordFile).slice(4), ['needs-hello:stop', 'hello:stop']);

  const changes = events.filter((e) => e.event_type === 'extension.state.changed').map((e) => e.payload);
  t.same(changes, [
    { name: 'needs-hello', enabled: true, loaded: false, error: null },
    { name: 'hello', enabled: true, loaded: false, error: null },
  ]);
  t.same(
    d.daemon.kernel.extensions.status().map((row) => [row.name, row.state, row.loaded]),
    [
      ['needs-hello', 'stopped', false],
      ['hello', 'stopped', false],
    ],
  );
  t.same(await d.daemon.kernel.contributions.toolsFor('a1', new Set()), [], 'contributions withdrawn at stop');
});

/** A registry over a fake kernel, for the lifecycle rules that need no HTTP. */
function fakeRegistry() {
  const withdrawn: string[] = [];
  const warnings: string[] = [];
  const logger = {
    debug() {},
    info() {},
    error() {},
    warn: (_obj: unknown, msg?: string) => void warnings.push(msg ?? ''),
    child() {
      return logger;
    },
  };
  const kernel = {
    contributions: { withdraw: (name: string) => void withdrawn.push(name) },
    logger,
    bus: { emit: () => undefined },
  } as unknown as ConstructorParameters<typeof ExtensionRegistry>[0];
  const registry = new ExtensionRegistry(kernel);
  const add = (name: string, hooks: ExtensionRecord['hooks'], dependsOn: string[] = []) => {
    const record: ExtensionRecord = {
      entry: { name, module: name, enabled: true, config: {} },
      name,
      definition: null,
      config: {},
      prefix: `/${name}`,
      agentRoutes: null,
      dependsOn,
      state: 'loaded',
      error: null,
      hooks,
      stopCalled: false,
      release: () => {},
    };
    registry.add(record);
    return record;
  };
  return { registry, add, withdrawn, warnings, logger };
}

t.test('stopAll: at most once, errors logged, hanging stops bounded, failed starts still stopped', async (t) => {
  const { registry, add, warnings, logger } = fakeRegistry();
  const calls: string[] = [];
  add('a', { start: () => void calls.push('start a'), stop: () => void calls.push('stop a') });
  add(
    'b',
    {
      start: () => {
        throw new Error('no');
      },
      stop: () => void calls.push('stop b'),
    },
    ['a'],
  );
  add(
    'c',
    {
      start: () => void calls.push('start c'),
      stop: () => {
        calls.push('stop c');
        throw new Error('stop failed');
      },
    },
    ['b'],
  );
  add('d', { stop: () => new Promise<void>(() => calls.push('stop d (hangs)')) });
  const lifecycle = new ExtensionLifecycle(registry, ['a', 'b', 'c', 'd'], logger);

  await lifecycle.startAll();
  t.same(calls, ['start a'], 'c is not started: its dependency b failed');
  t.match(registry.get('b'), { state: 'failed', error: 'start failed: no' });
  t.match(registry.get('c'), { state: 'failed', error: 'dependency not running: b (failed: start failed: no)' });

  // d hangs: its share (a quarter) of the budget runs out and the others are still stopped (once). The
  // budget is large enough that a timer firing late on a loaded machine still leaves the others time.
  await lifecycle.stopAll(4_000);
  await lifecycle.stopAll(4_000);
  t.same(calls.slice(1), ['stop d (hangs)', 'stop c', 'stop b', 'stop a']);
  t.match(warnings.join('\n'), /extension d did not stop within/);
});
