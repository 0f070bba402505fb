/**
 * The providers' call guard: its deadline starts when the request goes out, not when the guard is made
 * (a vendor SDK loading for seconds on a busy machine must not use up a models call's or a turn's time),
 * and it still ends a request that the server does not answer in time.
 */
import t from 'tap';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import { CallGuard } from '../extensions/providers/call-guard.js';

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
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // fetch's first use loads undici: done before, so the guarded request is only the loopback round trip.
  await (await fetch(`${url}/fast`)).arrayBuffer();
  const late = new CallGuard(undefined, { timeoutMs: 2000, idleTimeoutMs: 0 });
  t.teardown(() => late.dispose());
  // Longer than the deadline passes before the request (as an SDK import would take); the request then
  // has the whole 2 s, ample for a loopback answer on a loaded machine.
  await sleep(2200);
  const response = await late.fetch(`${url}/fast`);
  t.same(await response.json(), { ok: true }, 'answered: the deadline had not started');
  t.equal(late.reason, null);

  const silent = new CallGuard(undefined, { timeoutMs: 300, idleTimeoutMs: 0 });
  t.teardown(() => silent.dispose());
  await t.rejects(silent.fetch(`${url}/silent`), 'a request the server does not answer is aborted');
  t.equal(silent.reason, 'timeout');
});
