/**
 * The providers' call guard: its deadline starts when the request goes out, not when the guard is made
 * (what runs before, such as a first module import on a busy machine, must not use up a models call's or a
 * turn's time), and it still ends a request that the server does not answer in time.
 */
import t from 'tap';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import { CallGuard } from '../extensions/providers/call-guard.js';
import { closeWireConnections, postJson } from '../extensions/providers/wire-http.js';

const get = (url: string, guard: CallGuard) => postJson({ url, headers: {}, guard, errorOf: (body) => body });

t.test('the deadline counts from the request, and still ends a silent one', async (t) => {
  const held: Array<() => void> = [];
  const server = createServer((req, res) => {
    if (req.url === '/silent') held.push(() => res.destroy());
    else res.end('{"ok":true}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    for (const release of held) release();
    closeWireConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // A first call made before, so the guarded request is only the loopback round trip.
  const warm = new CallGuard(undefined, { timeoutMs: 10_000, idleTimeoutMs: 0 });
  await get(`${url}/fast`, warm);
  warm.dispose();
  const late = new CallGuard(undefined, { timeoutMs: 2000, idleTimeoutMs: 0 });
  t.teardown(() => late.dispose());
  // Longer than the deadline passes before the request; the request then has the whole 2 s, ample for a
  // loopback answer on a loaded machine.
  await sleep(2200);
  t.same(await get(`${url}/fast`, late), { ok: true }, 'answered: the deadline had not started');
  t.equal(late.reason, null);

  const silent = new CallGuard(undefined, { timeoutMs: 300, idleTimeoutMs: 0 });
  t.teardown(() => silent.dispose());
  await t.rejects(get(`${url}/silent`, silent), 'a request the server does not answer is aborted');
  t.equal(silent.reason, 'timeout');
});
