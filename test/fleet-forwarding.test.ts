/**
 * Any daemon answers for any agent: two built daemons on one nats-server; an agent runs on the first and
 * the second answers for it (forwarded over NATS request/reply) with the same status codes and bodies, lists
 * it in `GET /agents` with the daemon that runs it, and runs a chat turn on it there.
 */
import t from 'tap';
import { createAgentFile } from './helpers/agent-file.js';
import { runDaemon, tempDir } from './helpers/daemon.js';
import { fleetJoined, fleetManifest, startNats } from './helpers/nats.js';
import { startToolDriver } from './helpers/tool-driver.js';
import { agtInProcess } from './helpers/cli-in-process.js';

const nats = await startNats(t);
if (typeof nats === 'string') {
  t.comment(`skipped: ${nats}`);
  t.plan(0, nats);
} else {
  const driver = await startToolDriver(t);
  const manifest = fleetManifest({ ttlSeconds: 10, requestTimeoutMs: 20_000 });
  const daemon = (daemonName: string) =>
    runDaemon(t, {
      settings: { providers: [driver.provider], fleet: { servers: [nats.url], name: 'relay', daemonName } },
      extensions: manifest,
    });
  const [alpha, beta] = await Promise.all([daemon('alpha'), daemon('beta')]);
  await Promise.all([fleetJoined(alpha), fleetJoined(beta)]);
  const path = await createAgentFile(tempDir(t), { name: 'far-away', handle: 'far', model: driver.model });
  const loaded = await alpha.request('POST', '/agents/load', { filePath: path });
  const id = loaded.body.id as string;

  t.test('GET /agents lists the agents other daemons run, with the daemon', async (t) => {
    t.equal(loaded.status, 200);
    const listed = await beta.request('GET', '/agents');
    t.equal(listed.status, 200);
    t.same(
      listed.body.map((agent: Record<string, unknown>) => [agent.id, agent.name, agent.daemon, agent.runtimeState]),
      [[id, 'far-away', 'alpha', 'remote']],
    );
    const own = await alpha.request('GET', '/agents');
    t.same(
      own.body.map((agent: Record<string, unknown>) => [agent.id, agent.daemon]),
      [[id, undefined]],
      'the holder lists it as its own',
    );
  });

  t.test('agent routes answer through any daemon as on the one that runs it', async (t) => {
    for (const route of [`/agents/${id}/config`, '/agents/far/config', '/agents/far-away/tools', `/agents/${id}`]) {
      const [here, there] = await Promise.all([beta.request('GET', route), alpha.request('GET', route)]);
      t.same([here.status, here.body], [there.status, there.body], `GET ${route}`);
    }
    const refused = await beta.request('PATCH', `/agents/${id}/config`, { state: 'exploding' });
    const refusedThere = await alpha.request('PATCH', `/agents/${id}/config`, { state: 'exploding' });
    t.same([refused.status, refused.body], [refusedThere.status, refusedThere.body], 'a refusal is the same 400');
    t.equal(refused.status, 400);
    const patched = await beta.request('PATCH', `/agents/${id}/config`, { description: 'changed through beta' });
    t.equal(patched.status, 200);
    const config = await alpha.request('GET', `/agents/${id}/config`);
    t.equal(config.body.config.description, 'changed through beta', 'the change happened on the daemon that runs it');
    const missing = await beta.request('GET', '/agents/nobody/status');
    t.same([missing.status, missing.body.code], [404, 'not_found'], 'an agent no daemon runs is 404');
  });

  t.test('a chat through a daemon that does not run the agent', async (t) => {
    const chat = await beta.request('POST', `/agents/far/chat?wait=true`, { text: 'hello from beta' });
    t.equal(chat.status, 200, JSON.stringify(chat.body));
    const history = await alpha.request('GET', `/agents/${id}/chat`);
    t.equal(history.status, 200);
    t.match(JSON.stringify(history.body), 'hello from beta', 'the turn ran on the daemon that holds the agent');
    // agt chat follows the agent's events (GET /events?agentId=): through beta they come from the fleet stream.
    const cli = await agtInProcess(['chat', 'far', '-m', 'hello from the cli'], {
      AGT_DAEMON_URL: beta.url,
      AGT_DAEMON_TOKEN: beta.token,
    });
    t.equal(cli.code, 0, cli.stderr);
    t.match(cli.stdout, /ok/, 'agt chat through the other daemon prints the reply');
  });

  t.test('agt fleet status, pointed at a daemon that does not run the agent', async (t) => {
    const env = { AGT_DAEMON_URL: beta.url, AGT_DAEMON_TOKEN: beta.token };
    const json = await agtInProcess(['fleet', 'status', '--json'], env);
    t.equal(json.code, 0, json.stderr);
    const view = JSON.parse(json.stdout);
    t.match(view, { configured: true, fleet: 'relay', daemon: 'beta', connected: true });
    t.same(
      view.agents.map((agent: { agentId: string; daemon: string }) => [agent.agentId, agent.daemon]),
      [[id, 'alpha']],
    );
    t.same(
      view.daemons.map((daemon: { name: string; alive: boolean; agents: unknown[] }) => [
        daemon.name,
        daemon.alive,
        daemon.agents.length,
      ]),
      [
        ['alpha', true, 1],
        ['beta', true, 0],
      ],
      'the daemons, alive, with their agents',
    );
    const human = await agtInProcess(['fleet', 'status'], env);
    t.match(human.stdout, /fleet relay, daemon beta/);
    t.match(human.stdout, /alpha\s+alive\s+yes\s+1\s/, 'the daemons table');
    t.match(human.stdout, /alpha\s+far-away/);
  });

  t.test('a planned move: unloaded on one daemon, loaded from the same file on the other, history kept', async (t) => {
    const moved = await beta.request('POST', '/fleet/move', { agent: 'far', daemon: 'beta' });
    t.equal(moved.status, 200, JSON.stringify(moved.body));
    t.match(moved.body, { agentId: id, from: 'alpha', to: 'beta', moved: true });
    t.same((await alpha.request('GET', '/fleet')).body.agents, [], 'alpha runs it no more');
    t.same(
      (await beta.request('GET', '/fleet')).body.agents.map((agent: { agentId: string }) => agent.agentId),
      [id],
      'beta does',
    );
    const listed = await alpha.request('GET', '/agents');
    t.same(
      listed.body.map((agent: Record<string, unknown>) => [agent.id, agent.daemon]),
      [[id, 'beta']],
      'alpha now lists it on beta',
    );
    const history = await beta.request('GET', `/agents/${id}/chat`);
    t.match(JSON.stringify(history.body), 'hello from beta', 'the conversation moved with the file');
    const again = await alpha.request('POST', '/fleet/move', { agent: id, daemon: 'beta' });
    t.match(again.body, { moved: false }, 'a move to where it runs is a no-op');
    const nowhere = await alpha.request('POST', '/fleet/move', { agent: 'nobody', daemon: 'beta' });
    t.same([nowhere.status, nowhere.body.code], [404, 'not_found']);
    const env = { AGT_DAEMON_URL: alpha.url, AGT_DAEMON_TOKEN: alpha.token };
    const back = await agtInProcess(['fleet', 'move', 'far', 'alpha'], env);
    t.equal(back.code, 0, back.stderr);
    t.match(back.stdout, /far moved from beta to alpha/);
    t.same(
      (await alpha.request('GET', '/fleet')).body.agents.map((agent: { agentId: string }) => agent.agentId),
      [id],
      'and back with agt fleet move',
    );
  });

  t.test('a drain moves every agent of a daemon to the others', async (t) => {
    const second = await alpha.request('POST', '/agents/load', {
      filePath: await createAgentFile(tempDir(t), { name: 'second' }),
    });
    t.equal(second.status, 200);
    const env = { AGT_DAEMON_URL: beta.url, AGT_DAEMON_TOKEN: beta.token };
    const drained = await agtInProcess(['fleet', 'drain', 'alpha', '--to', 'beta', '--json'], env);
    t.equal(drained.code, 0, drained.stderr);
    const view = JSON.parse(drained.stdout);
    t.same(
      view.moved.map((entry: { agentId: string; to: string }) => entry.to),
      ['beta', 'beta'],
    );
    t.same(view.failed, []);
    t.same((await alpha.request('GET', '/fleet')).body.agents, [], 'alpha runs nothing now');
    t.same(
      (await beta.request('GET', '/fleet')).body.agents.map((agent: { agentId: string }) => agent.agentId).sort(),
      [id, second.body.id].sort(),
    );
  });

  t.test('a drained daemon refuses new agents, also after its restart, until undrained', async (t) => {
    t.match((await alpha.request('GET', '/fleet')).body, { daemon: 'alpha', draining: true, drainTo: ['beta'] });
    t.match((await beta.request('GET', '/fleet')).body, { daemon: 'beta', draining: false, drainTo: [] });
    const filePath = await createAgentFile(tempDir(t), { name: 'newcomer' });
    const refused = await alpha.request('POST', '/agents/load', { filePath });
    t.same(
      [refused.status, refused.body.code, refused.body.daemon, refused.body.to],
      [409, 'daemon_draining', 'alpha', ['beta']],
    );
    const moveRefused = await beta.request('POST', '/fleet/move', { agent: id, daemon: 'alpha' });
    t.same([moveRefused.status, moveRefused.body.code], [409, 'daemon_draining'], 'a move to it is refused');
    t.match((await beta.request('GET', '/fleet')).body.agents, [{ agentId: id }], 'before anything stopped');
    const restarted = await alpha.restart();
    await fleetJoined(restarted);
    const env = { AGT_DAEMON_URL: restarted.url, AGT_DAEMON_TOKEN: restarted.token };
    const status = await agtInProcess(['fleet', 'status'], env);
    t.match(
      status.stdout,
      /daemon alpha is drained: it takes no new agent \(beta can\)/,
      'the mark outlasts a restart',
    );
    const again = await restarted.request('POST', '/agents/load', { filePath });
    t.same([again.status, again.body.code], [409, 'daemon_draining']);
    const undrained = await agtInProcess(['fleet', 'undrain', 'alpha'], env);
    t.equal(undrained.code, 0, undrained.stderr);
    t.match(undrained.stdout, /alpha takes new agents again/);
    t.match((await restarted.request('GET', '/fleet')).body, { draining: false });
    const loaded = await restarted.request('POST', '/agents/load', { filePath });
    t.equal(loaded.status, 200, JSON.stringify(loaded.body));
    const twice = await beta.request('POST', '/fleet/undrain', { daemon: 'alpha' });
    t.same(twice.body, { daemon: 'alpha', undrained: false });
  });
}
