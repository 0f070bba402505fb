/**
 * `sys_fetch` refuses loopback destinations in every spelling, a public-looking name that resolves to
 * loopback (DNS rebinding, faked through the tool's resolver in this process) included, unless the owner
 * allows the host.
 */
import t from 'tap';
import { fetchAll, hitServer } from './helpers/sys-fetch.js';
import { fetchDns } from '../kernel/runtime/tools/fetch-tool.js';
import { runtimeHarness } from './fixtures/runtime/harness.js';

t.test('sys_fetch refuses loopback destinations unless the owner allows the host', async (t) => {
  const target = await hitServer(t, (_req, res) => res.end('secret'));
  const h = await runtimeHarness(t);
  const realLookup = fetchDns.lookup;
  t.teardown(() => void (fetchDns.lookup = realLookup));
  // A public-looking name that resolves to loopback (DNS rebinding); other names resolve normally.
  fetchDns.lookup = async (name) =>
    name === 'rebind.example' ? [{ address: '127.0.0.1', family: 4 }] : realLookup(name);
  const id = await h.agent();
  const base = `:${target.port}/`;
  const results = await fetchAll(h, id, [
    { url: `http://127.0.0.1${base}` },
    { url: `http://localhost${base}` },
    { url: `http://[::1]${base}` },
    { url: `http://rebind.example${base}` },
    { url: `http://2130706433${base}` },
    { url: `http://[::ffff:127.0.0.1]${base}` },
    { url: `http://0.0.0.0${base}` },
  ]);
  t.equal(results.length, 7);
  for (const result of results) {
    t.equal(result.isError, true);
    t.match(result.content, /refuses .*(loopback|this-network).*security\.fetch_allow_hosts/);
  }
  t.match(results[3]!.content, /rebind\.example \(resolves to 127\.0\.0\.1\)/);
  t.same(target.hits, [], 'no request reached the server');
});
