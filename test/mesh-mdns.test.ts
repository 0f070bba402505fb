/**
 * LAN discovery: two daemons on this machine announce `_agt-mesh._tcp` over mDNS on the loopback
 * interface (bonjour-service with `interface: 127.0.0.1, bind: 0.0.0.0`, see the dependencies note) and
 * list each other in `GET /network/peers`, beside the manual peers of the settings. A server bound to
 * loopback only is not announced unless the manifest asks; turning LAN on announces it.
 */
import t from 'tap';
import { bootMeshDaemon, eventually } from './helpers/mesh.js';

const MDNS = { interface: '127.0.0.1', bind: '0.0.0.0' };
const d1 = await bootMeshDaemon(t, {
  meshConfig: { mdns: { ...MDNS, announceOnLoopback: true } },
  settings: { meshPeers: ['http://192.0.2.7:7295'] },
});
const d2 = await bootMeshDaemon(t, { meshConfig: { mdns: { ...MDNS, announceOnLoopback: false } } });
const peers = async (d: typeof d1) => (await d.request('GET', '/network/peers')).body.peers as any[];

t.test('manual peers are listed', async (t) => {
  t.match((await peers(d1))[0], {
    name: 'http://192.0.2.7:7295',
    url: 'http://192.0.2.7:7295',
    source: 'manual',
    seenAt: null,
  });
});

t.test('a daemon announcing on loopback is found by the other', async (t) => {
  const seen = await eventually(
    async () => (await peers(d2)).find((peer) => peer.source === 'mdns'),
    'daemon 1 over mDNS',
  );
  t.equal(seen.url, d1.meshUrl, 'the TXT record carries the endpoint');
  t.ok(seen.seenAt > 0);
  t.notOk(
    (await peers(d2)).some((peer) => peer.url === d2.meshUrl),
    'its own announcement is not a peer',
  );
  await new Promise((done) => setTimeout(done, 300));
  t.notOk(
    (await peers(d1)).some((peer) => peer.source === 'mdns'),
    'daemon 2 listens on loopback only: not announced',
  );
});

t.test('LAN on: daemon 2 announces itself', async (t) => {
  const lan = await d2.request('PUT', '/network/lan', { enabled: true });
  t.match(lan.body.mesh, { host: '0.0.0.0', running: true });
  const seen = await eventually(
    async () => (await peers(d1)).find((peer) => peer.source === 'mdns'),
    'daemon 2 over mDNS',
  );
  t.equal(new URL(seen.url).port, String(lan.body.mesh.port));
  await d2.request('PUT', '/network/lan', { enabled: false });
});

t.test('mesh off: the browser and announcement stop', async (t) => {
  await d1.request('POST', '/network/mesh/disable');
  t.same(
    (await peers(d1)).map((peer) => peer.source),
    ['manual'],
    'only manual peers while off',
  );
  await d1.request('POST', '/network/mesh/enable');
});
