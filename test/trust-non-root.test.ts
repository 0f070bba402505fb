/**
 * The owner's locks on an agent's own config hold with the daemon as an ordinary user (uid 65534, started
 * from root; as the user the test runs as otherwise): on the built daemon, the agent's `sys_update_config`,
 * called by its model, cannot move it to another configured provider nor give it a command target, until
 * the owner allows that provider for it. The full cases run as root in test/trust-config-ceiling.test.ts;
 * the id cases as both users in test/trust-agent-id.test.ts.
 */
import { chownSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { runDaemon, tempDir } from './helpers/daemon.js';
import { startToolDriver } from './helpers/tool-driver.js';

const USER = 65534;
const uid = process.getuid?.() === 0 ? USER : undefined;
const base = tempDir(t, 'agt-non-root-');
const [dataDir, home, agents] = ['data', 'home', 'agents'].map((name) => join(base, name));
for (const dir of [base, dataDir!, home!, agents!]) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (uid !== undefined) chownSync(dir, uid, uid);
}
// Two providers the owner configured, both served by the driver's fake (calls told apart by model id).
const driver = await startToolDriver(t);
const pricey = { ...driver.provider, id: 'pricey', name: 'Pricey' };
const onPricey = () => driver.fake.chatRequests().filter((request) => request.body.model === 'big-model').length;
const d = await runDaemon(t, {
  dataDir: dataDir!,
  ...(uid === undefined ? {} : { uid }),
  env: { HOME: home!, TMPDIR: home! },
  settings: { providers: [driver.provider, pricey] },
});
if (uid !== undefined) chownSync(join(dataDir!, 'settings.json'), uid, uid);

t.test(
  `as uid ${uid ?? process.getuid?.()}: which provider it runs on, and its triggers, are the owner's`,
  async (t) => {
    t.ok(d.url, `the daemon runs: ${d.stderr()}`);
    const runsAs = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${d.child.pid}/status`, 'utf8'))?.[1]);
    t.equal(runsAs, uid ?? process.getuid?.(), `as uid ${runsAs}`);
    t.equal((await d.request('POST', '/identity/create', { passphrase: 'owner passphrase' })).status, 201);
    const created = await d.request('POST', '/agents/create', { name: 'Mover', directory: agents, start: true });
    t.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.agentId as string;
    t.equal(
      (
        await d.request('PATCH', `/agents/${id}/config`, {
          model: driver.model,
          tools: [{ name: 'sys_update_config', enabled: true }],
        })
      ).status,
      200,
    );
    const config = async () => (await d.request('GET', `/agents/${id}/config`)).body.config;

    const moved = await driver.run(d, id, 'sys_update_config', {
      patch: { model: { provider: 'pricey', model_id: 'big-model' } },
    });
    t.match(
      moved,
      /owner lock: model\.provider is locked by the owner: this agent may not move to provider "pricey"/,
      'the move is refused',
    );
    const command = await driver.run(d, id, 'sys_update_config', {
      patch: { triggers: { on_timer: { enabled: true, targets: [{ scope: 'system', command: 'id -u' }] } } },
    });
    t.match(
      command,
      /owner lock: triggers\.on_timer: command targets are locked by the owner/,
      'a command target is refused',
    );
    t.match((await config()).model, driver.model, 'still on its provider');
    t.notMatch(JSON.stringify((await config()).triggers ?? {}), /id -u/, 'no command target');
    t.equal(onPricey(), 0, 'nothing reached the other provider');

    t.equal(
      (await d.request('PATCH', '/settings', { agentCeilings: { [id]: { providers: ['pricey'] } } })).status,
      200,
    );
    t.match(
      await driver.run(d, id, 'sys_update_config', { patch: { model: { provider: 'pricey', model_id: 'big-model' } } }),
      /updated model/,
      'allowed by the owner, the move goes through',
    );
    t.equal((await config()).model.provider, 'pricey');
    t.ok(onPricey() > 0, "the turn's next call ran on it");
  },
);
