/**
 * The minute re-check of locked credentials (the watcher's checkAll), in process: with the runtime's key
 * cache emptied it keeps a password-locked agent degraded without a new event, and it repairs a degraded
 * flag that is out of date (set here by hand on an unlocked agent).
 */
import t from 'tap';
import type { UmbilicalEvent } from '../contracts/events.js';
import { bootDaemon, tempDir } from './helpers/daemon.js';

const PASSPHRASE = 'owner passphrase';

t.test('the re-check keeps a password lock silently and repairs a stale flag', async (t) => {
  const dir = tempDir(t);
  const d = await bootDaemon(t);
  const kernel = d.daemon.kernel;
  await d.request('POST', '/identity/create', { passphrase: PASSPHRASE });
  const plain = (await d.request('POST', '/agents/create', { name: 'Plain', directory: dir })).body;
  const vault = (
    await d.request('POST', '/agents/create', { name: 'Vault', directory: dir, password: 'vault password' })
  ).body;
  await d.request('POST', `/agents/${vault.agentId}/stop`);
  t.equal((await d.request('POST', '/agents/load', { filePath: vault.filePath })).status, 200);
  const degraded = async (id: string) => (await d.request('GET', `/agents/${id}/status`)).body.degraded;
  t.equal(await degraded(vault.agentId), 'CREDENTIALS_LOCKED', 'reloaded without its password');

  const events: UmbilicalEvent[] = [];
  t.teardown(kernel.bus.subscribe((event) => events.push(event)));
  const degradedEvents = (id: string) =>
    events
      .filter((event) => event.event_type === 'agent.degraded' && event.agent_id === id)
      .map((event) => event.payload);
  kernel.credentials.keys.forget(vault.agentId);
  kernel.credentials.watcher.checkAll();
  t.same(degradedEvents(vault.agentId), [], 're-checks do not unlock a password, and say nothing');
  t.equal(await degraded(vault.agentId), 'CREDENTIALS_LOCKED');

  const plainAgent = kernel.registry.resolve(plain.agentId);
  plainAgent.degraded = 'CREDENTIALS_LOCKED';
  kernel.credentials.watcher.checkAll();
  t.notOk(await degraded(plain.agentId), 'the flag is repaired');
  t.same(degradedEvents(plain.agentId), [{ degraded: null }]);
});
