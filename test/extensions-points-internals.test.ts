/**
 * Typed extension points: `createExtensionPoint`, `ctx.provide` (during register only; one provider on
 * a `one` point, the second fails naming both), `ctx.use` (only what `dependsOn` offers, an error naming
 * both otherwise), withdrawal with the provider, and the kernel's own points: the agent locator
 * (`locateAgentFiles`), the message carriers and outbound transports `msg_send` hands its messages to. Also the `ctx.env`
 * view. Units, no daemon; the fixture extensions in the built daemon: extensions-points.test.ts.
 */
import t from 'tap';
import { createExtensionPoint, type ExtensionPoint } from '../contracts/extension.js';
import { agentLocator, outboundAddress, outboundTransports } from '../contracts/points.js';
import { messageCarriers } from '../contracts/message-carriers.js';
import { Contributions } from '../kernel/extensions/contributions.js';
import { extensionEnv } from '../kernel/extensions/context.js';
import { locateAgentFiles, outboundTransportFor, sendOutbound } from '../kernel/extensions/kernel-points.js';
import { ExtensionPoints } from '../kernel/extensions/points.js';

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
  t.throws(() => points.provide('b', one, 'from b'), {
    message: 'extension point test.one takes one provider: a provides it, so b cannot',
  });
  t.throws(() => points.provide('a', one, 'again'), {
    message: 'extension point test.one takes one provider and a already provides it',
  });
  t.throws(
    () => points.provide('c', { id: 'test.one', providers: 'all' } as ExtensionPoint<string>, 'x'),
    /takes one provider\(s\) as a offers it; c offers it with providers "all"/,
  );

  points.provide('a', all, 'a1');
  points.provide('b', all, 'b1');
  points.provide('a', all, 'a2');
  t.same(
    points.providers(all).map((p) => `${p.owner}:${p.value}`),
    ['a:a1', 'b:b1', 'a:a2'],
    'load order, several per extension',
  );

  t.equal(points.use('user', ['a'], one), 'from a');
  t.same(points.use('user', ['b'], all), ['b1'], 'only what the dependencies offer');
  t.same(points.use('user', ['a', 'b'], all), ['a1', 'b1', 'a2']);
  t.throws(() => points.use('user', ['b'], one), {
    message:
      'extension user uses extension point test.one, provided by a, without depending on it: add a to its dependsOn',
  });
  t.throws(() => points.use('user', [], all), {
    message: /provided by a, b, without depending on it: add one of them to its dependsOn/,
  });
  t.throws(() => points.use('user', ['a'], createExtensionPoint('test.none')), {
    message: 'extension user uses extension point test.none, which no loaded extension provides',
  });

  points.withdraw('a');
  t.same(points.providers(one), []);
  t.same(
    points.providers(all).map((p) => p.value),
    ['b1'],
  );
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
  points.provide('finder', agentLocator, {
    locate: async (ref) => (ref === 'alpha' ? ['/a/alpha.agt', 'relative.agt', '/a/alpha.agt', 7 as never] : []),
  });
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
  points.provide('mesh', outboundTransports, {
    schemes: ['did:'],
    send: async (e) => void calls.push(`mesh ${e.address}`),
  });
  points.provide('channels', outboundTransports, {
    schemes: ['telegram:', 'DID:'],
    send: async (e) => void calls.push(`channels ${e.address}`),
  });
  t.equal(outboundTransportFor(points, 'DID:key:z6Mk')?.owner, 'mesh', 'first that claims wins; schemes ignore case');
  t.equal(outboundTransportFor(points, 'telegram:1')?.owner, 'channels');
  const report = { attemptFailed: () => {} };
  t.equal(
    sendOutbound(
      points,
      { agentId: 'a', messageId: 1, address: 'slack:x', channel: 'slack', recipient: 'x', text: 'hi' },
      report,
    ),
    undefined,
    'unclaimed',
  );
  const sending = await sendOutbound(
    points,
    { agentId: 'a', messageId: 2, address: 'telegram:9', channel: 'telegram', recipient: '9', text: 'hi' },
    report,
  );
  await sending?.delivery;
  t.same(calls, ['channels telegram:9']);
  points.provide('thrower', outboundTransports, {
    schemes: ['boom:'],
    send: () => {
      throw new Error('sync throw');
    },
  });
  const boom = { agentId: 'a', messageId: 3, address: 'boom:1', channel: 'boom', recipient: '1', text: 'x' };
  await t.rejects((await sendOutbound(points, boom, report))!.delivery, /sync throw/, 'a throw is a rejected delivery');
  const atOnce = sendOutbound(points, boom, report);
  t.notOk(atOnce instanceof Promise, 'without carriers the choice is made at once');
  await t.rejects((atOnce as { delivery: Promise<unknown> }).delivery, /sync throw/);

  // Carriers are asked first, in load order; one that says no (or throws, or is late) leaves the message on.
  const warnings: string[] = [];
  const warn = (message: string) => void warnings.push(message);
  points.provide('broken', messageCarriers, {
    takes: () => {
      throw new Error('cannot tell');
    },
    send: async () => void calls.push('broken'),
  });
  points.provide('fleet', messageCarriers, {
    takes: async (e) => e.address === 'did:key:z6Mkfleet',
    send: async (e) => void calls.push(`fleet ${e.address}`),
  });
  const toFleet = {
    agentId: 'a',
    messageId: 4,
    address: 'did:key:z6Mkfleet',
    channel: 'mesh',
    recipient: null,
    text: 'x',
  };
  const carried = await sendOutbound(points, toFleet, report, warn);
  t.equal(carried?.owner, 'fleet', 'the carrier that takes it delivers it');
  await carried?.delivery;
  t.match(warnings, [/carrier of extension broken failed to decide: cannot tell/], 'a throw is a no, told');
  const toMesh = { ...toFleet, messageId: 5, address: 'did:key:z6Mkother' };
  const left = await sendOutbound(points, toMesh, report, warn);
  t.equal(left?.owner, 'mesh', 'what no carrier takes goes to the transport of its scheme');
  await left?.delivery;
  t.same(calls.slice(-2), ['fleet did:key:z6Mkfleet', 'mesh did:key:z6Mkother']);
  t.equal(await sendOutbound(points, { ...toFleet, address: 'slack:x' }, report, warn), undefined, 'still unclaimed');
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
