/**
 * Each server of the built daemon has a connection budget of its own (settings `server.maxConnections`
 * and `server.maxConnectionsPerAddress`, set low here): a client over its per-address share is closed at
 * once while other addresses still connect, the whole budget full closes every new connection, and a
 * flood that fills the mesh server's budget leaves the main API's clients served. A settings change
 * applies to the next connection. Clients come from several loopback addresses (127.0.0.0/8).
 */
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { defaultConnectionCaps, addressBucket } from '../kernel/http/connection-caps.js';
import { ROOT, runDaemon } from './helpers/daemon.js';
import { eventually, meshUrlOf } from './helpers/mesh.js';

const PER_ADDRESS = 3;
const TOTAL = 7;
const d = await runDaemon(t, {
  settings: { server: { maxConnections: TOTAL, maxConnectionsPerAddress: PER_ADDRESS } },
  extensions: {
    extensions: [
      // A long header time limit on the mesh: the held connections wait in a request's headers.
      {
        name: 'mesh',
        module: join(ROOT, 'extensions/mesh/index.ts'),
        enabled: true,
        config: { mdns: { enabled: false }, serverLimits: { headersTimeoutMs: 60_000 } },
      },
    ],
  },
});
const meshUrl = await meshUrlOf(d);
const token = d.token;

interface Probe {
  served: boolean;
  socket: Socket;
}

/**
 * Opens a connection from `from` and sends `GET /health` (kept alive): served when an answer comes,
 * refused when the server closes it without one. A served connection is then held in the headers of a
 * next request, so it stays open.
 */
function probe(url: string, from: string, t: { teardown(fn: () => void): void }): Promise<Probe> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: target.hostname, port: Number(target.port), localAddress: from });
    t.teardown(() => socket.destroy());
    let received = '';
    socket.on('connect', () => socket.write(`GET /health HTTP/1.1\r\nHost: ${target.host}\r\n\r\n`));
    socket.on('data', (chunk) => {
      received += chunk.toString();
      if (/\r\n\r\n[\s\S]*"status"/.test(received)) {
        socket.write(`GET /health HTTP/1.1\r\nHost: ${target.host}\r\n`);
        resolve({ served: true, socket });
      }
    });
    const refused = () => resolve({ served: false, socket });
    socket.on('error', refused);
    socket.on('close', refused);
  });
}

async function probes(
  url: string,
  from: string,
  count: number,
  t: { teardown(fn: () => void): void },
): Promise<Probe[]> {
  const out: Probe[] = [];
  for (let i = 0; i < count; i++) out.push(await probe(url, from, t));
  return out;
}

const served = (list: Probe[]) => list.map((item) => item.served);

for (const [name, url] of [
  ['main API', d.url],
  ['mesh server', meshUrl],
] as const) {
  t.test(`${name}: at most ${PER_ADDRESS} from one address, ${TOTAL} in all`, async (t) => {
    const first = await probes(url, '127.0.0.2', PER_ADDRESS + 1, t);
    t.same(served(first), [true, true, true, false], 'the fourth from one address is closed unanswered');
    t.same(
      served(await probes(url, '127.0.0.3', PER_ADDRESS, t)),
      [true, true, true],
      'another address still connects',
    );
    t.same(
      served(await probes(url, '127.0.0.4', 2, t)),
      [true, false],
      'the seventh fills the budget; the eighth is closed',
    );
    for (const item of first) item.socket.destroy();
    // The server sees the closes on its side; then the address has its share again.
    await eventually(async () => {
      const again = await probe(url, '127.0.0.2', t);
      again.socket.destroy();
      return again.served;
    }, 'a freed connection');
  });
}

t.test('a settings change applies to the next connection', async (t) => {
  const patch = (server: Record<string, number>) =>
    fetch(`${d.url}/settings`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ server }),
    });
  // A total far above what earlier tests may still hold: a refusal here is the per-address share.
  t.equal((await patch({ maxConnections: 100, maxConnectionsPerAddress: 1 })).status, 200);
  t.same(served(await probes(d.url, '127.0.0.9', 2, t)), [true, false], 'the main API: one per address now');
  t.same(served(await probes(meshUrl, '127.0.0.9', 2, t)), [true, false], 'the mesh server too');
  t.equal((await patch({ maxConnections: TOTAL, maxConnectionsPerAddress: PER_ADDRESS })).status, 200);
});

t.test('a flood that fills the mesh server leaves the main API served', async (t) => {
  // One connection from each new address until the mesh server's whole budget is taken.
  const flood: Probe[] = [];
  for (let i = 0; i <= TOTAL && flood.every((item) => item.served); i++)
    flood.push(await probe(meshUrl, `127.0.1.${i + 1}`, t));
  t.equal(flood.at(-1)!.served, false, 'the mesh server is full');
  t.ok(flood.filter((item) => item.served).length <= TOTAL);
  const health = await fetch(`${d.url}/health`);
  t.equal(health.status, 200, 'the main API has a budget of its own');
  t.equal((await probe(d.url, '127.0.1.200', t)).served, true, 'and takes new clients');
});

t.test(
  'the defaults: an eighth of the open-file limit, at most 4096; a quarter of that per address; IPv6 by /64',
  async (t) => {
    t.same(defaultConnectionCaps(20_000), { maxConnections: 2_500, maxConnectionsPerAddress: 625 });
    t.same(defaultConnectionCaps(1_048_576), { maxConnections: 4_096, maxConnectionsPerAddress: 1_024 });
    t.same(defaultConnectionCaps(64), { maxConnections: 16, maxConnectionsPerAddress: 4 }, 'a floor for tiny limits');
    t.equal(addressBucket('::ffff:203.0.113.9'), '203.0.113.9', 'IPv4-mapped is the IPv4 client');
    t.equal(addressBucket('2001:db8:1:2:aaaa::1'), addressBucket('2001:db8:1:2:ffff:1:2:3'), 'one /64 is one client');
    t.not(addressBucket('2001:db8:1:2::1'), addressBucket('2001:db8:1:3::1'));
    t.equal(addressBucket('2001:db8::1'), addressBucket('2001:0db8:0:0:0:0:0:2'), 'spellings of one /64 agree');
  },
);
