/**
 * Typed extension points: `createExtensionPoint`, `ctx.provide` (during register only; one provider on
 * a `one` point, the second fails naming both), `ctx.use` (only what `dependsOn` offers, an error naming
 * both otherwise), withdrawal with the provider, and the kernel's own points: the agent locator
 * (`locateAgentFiles`) and the outbound transports `msg_send` hands its messages to. Also the `ctx.env`
 * view. One daemon serves the fixture extensions of the whole file.
 */
import t from 'tap';
import { join } from 'node:path';
import { createExtensionPoint, type ExtensionPoint } from '../contracts/extension.js';
import { agentLocator, outboundAddress, outboundTransports } from '../contracts/points.js';
import type { ToolDefinition } from '../contracts/tools.js';
import { AgtError } from '../contracts/errors.js';
import { Contributions } from '../kernel/extensions/contributions.js';
import { extensionEnv } from '../kernel/extensions/context.js';
import { locateAgentFiles, outboundTransportFor, sendOutbound } from '../kernel/extensions/kernel-points.js';
import { ExtensionPoints } from '../kernel/extensions/points.js';
import { createAgentFile } from './helpers/agent-file.js';
import { bootDaemon, ROOT, tempDir } from './helpers/daemon.js';

const FIXTURES = join(ROOT, 'test/fixtures/extensions/points');
const silent = { debug() {}, info() {}, warn() {}, error() {} } as never;

t.test('createExtensionPoint', async (t) => {
  const one = createExtensionPoint<number>('test.one');
  t.same({ ...one }, { id: 'test.one', providers: 'one' });
  t.ok(Object.isFrozen(one));
  t.equal(createExtensionPoint<number>('test.all', { providers: 'all' }).providers, 'all');
  t.throws(() => createExtensionPoint('Not An Id'), { name: 'TypeError', message: /must match/ });
  t.throws(() => createExtensionPoint('x', { providers: 'some' as never }), /"one" or "all"/);
});

t.test('ExtensionPoints: how providers combine, who may use them, withdrawal', async (t) => {
  const points = new ExtensionPoints();
  const one = createExtensionPoint<string>('test.one');
  const all = createExtensionPoint<string>('test.all', { providers: 'all' });

  points.provide('a', one, 'from a');
  t.throws(() => points.provide('b', one, 'from b'), { message: 'extension point test.one takes one provider: a provides it, so b cannot' });
  t.throws(() => points.provide('a', one, 'again'), { message: 'extension point test.one takes one provider and a already provides it' });
  t.throws(() => points.provide('c', { id: 'test.one', providers: 'all' } as ExtensionPoint<string>, 'x'), /takes one provider\(s\) as a offers it; c offers it with providers "all"/);

  points.provide('a', all, 'a1');
  points.provide('b', all, 'b1');
  points.provide('a', all, 'a2');
  t.same(points.providers(all).map((p) => `${p.owner}:${p.value}`), ['a:a1', 'b:b1', 'a:a2'], 'load order, several per extension');

  t.equal(points.use('user', ['a'], one), 'from a');
  t.same(points.use('user', ['b'], all), ['b1'], 'only what the dependencies offer');
  t.same(points.use('user', ['a', 'b'], all), ['a1', 'b1', 'a2']);
  t.throws(() => points.use('user', ['b'], one), {
    message: 'extension user uses extension point test.one, provided by a, without depending on it: add a to its dependsOn',
  });
  t.throws(() => points.use('user', [], all), { message: /provided by a, b, without depending on it: add one of them to its dependsOn/ });
  t.throws(() => points.use('user', ['a'], createExtensionPoint('test.none')), {
    message: 'extension user uses extension point test.none, which no loaded extension provides',
  });

  points.withdraw('a');
  t.same(points.providers(one), []);
  t.same(points.providers(all).map((p) => p.value), ['b1']);
  points.provide('b', one, 'from b');
  t.equal(points.use('user', ['b'], one), 'from b', 'a withdrawn point can be offered anew');

  const contributions = new Contributions(silent);
  contributions.points.provide('x', all, 'x1');
  contributions.withdraw('x');
  t.same(contributions.points.providers(all), [], 'withdrawing an extension withdraws its offers');
});

t.test('kernel points without a daemon: the locator and the transports', async (t) => {
  const points = new ExtensionPoints();
  t.equal(await locateAgentFiles(points, 'alpha'), null, 'no locator: null');
  points.provide('finder', agentLocator, { locate: async (ref) => (ref === 'alpha' ? ['/a/alpha.agt', 'relative.agt', '/a/alpha.agt', 7 as never] : []) });
  t.same(await locateAgentFiles(points, 'alpha'), ['/a/alpha.agt'], 'absolute paths, once each');
  t.same(await locateAgentFiles(points, 'beta'), []);
  points.withdraw('finder');
  points.provide('finder', agentLocator, { locate: () => 'not a list' as never });
  await t.rejects(locateAgentFiles(points, 'x'), { code: 'unavailable', message: /did not return a list/ });

  t.equal(outboundAddress('telegram', '123'), 'telegram:123');
  t.equal(outboundAddress('mesh', 'did:key:z6Mkabc'), 'did:key:z6Mkabc');
  t.equal(outboundAddress('mesh', null), 'mesh:');
  t.equal(outboundTransportFor(points, 'did:key:z6Mk'), undefined);
  const calls: string[] = [];
  points.provide('mesh', outboundTransports, { schemes: ['did:'], send: async (e) => void calls.push(`mesh ${e.address}`) });
  points.provide('channels', outboundTransports, { schemes: ['telegram:', 'DID:'], send: async (e) => void calls.push(`channels ${e.address}`) });
  t.equal(outboundTransportFor(points, 'DID:key:z6Mk')?.owner, 'mesh', 'first that claims wins; schemes ignore case');
  t.equal(outboundTransportFor(points, 'telegram:1')?.owner, 'channels');
  const report = { attemptFailed: () => {} };
  t.equal(sendOutbound(points, { agentId: 'a', messageId: 1, address: 'slack:x', channel: 'slack', recipient: 'x', text: 'hi' }, report), undefined, 'unclaimed');
  const sending = sendOutbound(points, { agentId: 'a', messageId: 2, address: 'telegram:9', channel: 'telegram', recipient: '9', text: 'hi' }, report);
  await sending?.delivery;
  t.same(calls, ['channels telegram:9']);
  points.provide('thrower', outboundTransports, { schemes: ['boom:'], send: () => { throw new Error('sync throw'); } });
  await t.rejects(sendOutbound(points, { agentId: 'a', messageId: 3, address: 'boom:1', channel: 'boom', recipient: '1', text: 'x' }, report)!.delivery, /sync throw/, 'a throw is a rejected delivery');
});

t.test('fixture extensions offering and using points', async (t) => {
  const agentsDir = tempDir(t, 'agt-points-');
  const d = await bootDaemon(t, {
    env: { FIXTURE_VAR: 'visible' },
    extensions: {
      extensions: [
        // points-user comes first on purpose: `dependsOn` must still load its providers before it.
        { name: 'points-user', module: join(FIXTURES, 'user.ts') },
        { name: 'points-provider', module: join(FIXTURES, 'provider.ts'), config: { agents: { alpha: [join(agentsDir, 'alpha.agt')] } } },
        { name: 'points-second', module: join(FIXTURES, 'second.ts') },
        { name: 'points-stranger', module: join(FIXTURES, 'stranger.ts') },
        { name: 'points-rival', module: join(FIXTURES, 'rival.ts') },
      ],
    },
  });
  const rows = new Map<string, any>((await d.request('GET', '/runtime/extensions')).body.extensions.map((row: any) => [row.name, row]));
  const points = d.daemon.kernel.contributions.points;

  t.test('a dependent uses what its dependencies offer', async (t) => {
    t.equal(rows.get('points-user').state, 'started');
    const res = await d.request('GET', '/points-user');
    t.equal(res.status, 200);
    t.same(res.body, { greeting: 'hello, agt', words: ['first', 'second', 'third'], again: true });
  });

  t.test('using a point without depending on its provider fails the user, naming both', async (t) => {
    t.match(rows.get('points-stranger'), {
      state: 'failed',
      error: 'register failed: extension points-stranger uses extension point fixture.greeter, provided by points-provider, without depending on it: add points-provider to its dependsOn',
    });
  });

  t.test('a second provider of a one-provider point fails, naming both; the first keeps it', async (t) => {
    t.match(rows.get('points-rival'), {
      state: 'failed',
      error: 'register failed: extension point fixture.greeter takes one provider: points-provider provides it, so points-rival cannot',
    });
    t.equal((await d.request('GET', '/points-rival')).status, 503);
    t.same(points.providers(createExtensionPoint('fixture.greeter')).map((p) => p.owner), ['points-provider']);
  });

  t.test('offering after register is refused', async (t) => {
    t.same((await d.request('GET', '/points-provider/late')).body, {
      error: 'extension points-provider offers extension point fixture.words after register: offer it during register',
    });
    t.same(points.providers(createExtensionPoint<string>('fixture.words', { providers: 'all' })).map((p) => p.value), ['first', 'second', 'third']);
  });

  t.test('the kernel asks the agent locator', async (t) => {
    t.same(await locateAgentFiles(points, 'alpha'), [join(agentsDir, 'alpha.agt')]);
    t.same(await locateAgentFiles(points, 'nobody'), []);
    const error = await locateAgentFiles(points, 'boom').catch((e: unknown) => e);
    t.ok(error instanceof AgtError);
    t.match(error, { code: 'unavailable', statusCode: 503, message: 'the agent locator of extension points-provider failed: the index is broken' });
  });

  t.test('msg_send hands messages to the transport that claims their address', async (t) => {
    const path = await createAgentFile(agentsDir, { name: 'sender', messaging: { mode: 'respond_only' } });
    const loaded = await d.request('POST', '/agents/load', { filePath: path });
    t.equal(loaded.status, 200);
    const agentId = loaded.body.id as string;
    const msgSend = d.daemon.kernel.builtinTools.find((tool: ToolDefinition) => tool.name === 'msg_send')!;
    const send = (args: Record<string, unknown>) =>
      msgSend.run(args, { agentId, loop: 'main', turnId: undefined, signal: new AbortController().signal, logger: silent });

    t.match(await send({ text: 'hi bob', channel: 'fixture', recipient: 'bob', data: { n: 1 } }), { content: 'queued message 1 to fixture' });
    t.match(await send({ text: 'to nowhere', channel: 'fixture', recipient: 'fail' }), { content: 'queued message 2 to fixture' });
    t.match(await send({ text: 'unclaimed', channel: 'slack', recipient: 'general' }), { content: 'queued message 3 to slack' });
    t.match(await send({ text: 'pending', channel: 'mesh', recipient: 'did:key:z6Mkpending' }), { content: 'queued message 4 to mesh' });

    const outbox = async () => {
      for (let i = 0; i < 100; i++) {
        const rows = (await d.request('GET', `/agents/${agentId}/outbox`)).body.messages as any[];
        if (!['queued', 'pending'].includes(rows[0].status) && !['queued', 'pending'].includes(rows[1].status)) return rows;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error('the outbox rows never left queued');
    };
    const rows = await outbox();
    t.match(rows[0], { id: 1, status: 'delivered', attempts: 1, error: null });
    t.ok(rows[0].delivered_at > 0, 'delivered_at is set');
    t.match(rows[1], { id: 2, status: 'failed', attempts: 1, error: 'nobody answers at fixture:fail' });
    t.match(rows[2], { id: 3, status: 'queued', attempts: 0 }, 'no transport claims it: queued, as before transports');
    t.match(rows[3], { id: 4, status: 'pending', attempts: 0 }, 'a transport still sending leaves it pending');
    t.same((await d.request('GET', '/points-provider/sent')).body.sent, [
      { agentId, messageId: 1, address: 'fixture:bob', channel: 'fixture', recipient: 'bob', text: 'hi bob', data: { n: 1 } },
    ]);
    const logs = (await d.request('GET', `/agents/${agentId}/logs`)).body;
    t.match(JSON.stringify(logs), /outbox message 2 to fixture:fail failed \(transport of extension points-provider\): nobody answers at fixture:fail/);
  });

  t.test('ctx.env: the environment the daemon was started with, without the kernel AGT_* variables', async (t) => {
    const read = async (name: string) => (await d.request('GET', `/points-provider/env/${name}`)).body.value;
    t.equal(await read('FIXTURE_VAR'), 'visible');
    t.equal(await read('AGT_LOG_LEVEL'), null, 'set for the daemon, hidden from extensions');
    t.equal(await read('AGT_EXTENSIONS'), null);
    t.equal(await read('NOT_SET_AT_ALL'), null);
  });
});

t.test('extensionEnv', async (t) => {
  const source: NodeJS.ProcessEnv = { FIXTURE_VAR: 'visible', AGT_OWNER_PASSPHRASE: 'secret' };
  const env = extensionEnv(source);
  t.equal(env.get('FIXTURE_VAR'), 'visible');
  t.equal(env.get('AGT_OWNER_PASSPHRASE'), undefined);
  t.equal(env.get('toString'), undefined, 'own variables only');
  source.LATER = 'read at call time';
  t.equal(env.get('LATER'), 'read at call time');
  t.ok(Object.isFrozen(env));
});
