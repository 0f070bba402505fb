/**
 * The compute extension of the built daemon against a real Docker engine (a private dockerd the test
 * starts): the base image built by setup, commands in each tier through `compute_exec` and system-scope
 * command targets, the hardening, limits (time, memory, pids, output), interrupts, a container removed
 * behind the daemon's back, and (a second daemon, configured so) an engine that is not there.
 */
import t from 'tap';
import { startDockerEngine } from './helpers/docker.js';
import { bootCompute } from './helpers/compute.js';

const engine = await startDockerEngine(t);
const skip = typeof engine === 'string' ? `compute tests need a Docker engine: ${engine}` : false;
if (skip) t.comment(skip);

t.test('compute against a real engine', { skip }, async (t) => {
  if (typeof engine === 'string') return;
  // A user-defined network for agents granted one (the test engine has no default bridge).
  t.equal((await engine.api('POST', '/networks/create', { Name: 'agt-test-net', Driver: 'bridge' })).status, 201);
  const c = await bootCompute(t, engine.host, { config: { network: 'agt-test-net' } });
  const { d } = c;

  t.test('setup builds the base image; before it, status and execs say what is missing', async (t) => {
    const before = await d.request('GET', '/compute');
    t.equal(before.status, 200);
    t.match(before.body, {
      engine: { reachable: true, version: /\d+\.\d+/ },
      image: { present: false, busybox: '/bin/busybox' },
      missing: ['image'],
      containers: [],
    });
    const early = await c.agent();
    const refused = await c.tool(early, { command: 'true' });
    t.ok(refused.isError);
    t.match(refused.text, /not built yet: POST \/compute\/setup/);
    const built = await d.request('POST', '/compute/setup', {});
    t.equal(built.status, 200, JSON.stringify(built.body));
    t.match(built.body, { built: true, busybox: '/bin/busybox' });
    t.match((await d.request('POST', '/compute/setup', {})).body, { built: false }, 'a second setup keeps the image');
    t.same((await d.request('GET', '/compute')).body.missing, []);
    t.equal((await d.request('POST', '/compute/setup', { rebuild: 'yes' })).status, 400);
  });

  t.test('shared tier: one container, each agent its own user and work dir, no network', async (t) => {
    const a = await c.agent();
    const b = await c.agent();
    const first = await c.tool(a, {
      command: 'id -u; pwd; echo secret > mine.txt; cat /proc/net/dev | tail -n +3 | cut -d: -f1',
    });
    t.equal(first.isError, false, first.text);
    const [uidA, dirA, ...ifaces] = first.result.stdout.trim().split('\n');
    t.match(first.result, { exit_code: 0, timed_out: false, target: /^agt-[0-9a-f]{12}-shared$/ });
    t.not(uidA, '0', 'not root');
    t.same(
      ifaces.map((name: string) => name.trim()),
      ['lo'],
      'no network interface but loopback',
    );
    const again = await c.tool(a, { command: 'cat mine.txt' });
    t.equal(again.result.stdout, 'secret\n', 'the work dir keeps files between calls');
    const other = await c.tool(b, { command: `id -u; pwd; cat ${dirA}/mine.txt` });
    const [uidB, dirB] = other.result.stdout.trim().split('\n');
    t.equal(other.result.target, first.result.target, 'the same container');
    t.not(uidB, uidA, 'another user');
    t.not(dirB, dirA, 'another work dir');
    t.not(other.result.exit_code, 0);
    t.match(other.result.stderr, /Permission denied/, "one agent cannot read another's files");
    const wget = await c.tool(a, { command: 'wget -q -T 3 -O - http://10.0.0.1/ ; echo "exit=$?"' });
    t.match(wget.result.stdout, /exit=[1-9]/, 'no route out');

    const viaCommand = await c.command(a, 'cat; echo; cat mine.txt');
    t.equal(viaCommand.event_type, 'turn.completed', JSON.stringify(viaCommand.payload));
    const ran = JSON.parse(viaCommand.payload.text);
    t.equal(ran.target, first.result.target, 'a system-scope command target runs in the same container');
    t.match(ran.stdout, /"trigger":"on_timer"[\s\S]*secret/, "with the event on stdin, in the agent's work dir");
  });

  t.test('isolated tier: its own hardened container', async (t) => {
    const id = await c.agent({ security: { compute_tier: 'isolated' } } as never);
    const run = await c.tool(id, {
      command:
        'id -u; touch /etc/x 2>&1; touch /tmp/x && echo tmp-ok; grep Cap[EP] /proc/self/status; grep NoNewPrivs /proc/self/status',
    });
    t.equal(run.result.exit_code, 0, run.text);
    t.match(run.result.target, /-agent-[0-9a-f]{16}$/);
    t.match(run.result.stdout, /Read-only file system/, 'the root is read-only');
    t.match(run.result.stdout, /tmp-ok/, '/tmp is writable');
    t.match(run.result.stdout, /CapEff:\s+0000000000000000/, 'no capabilities');
    t.match(run.result.stdout, /NoNewPrivs:\s+1/);
    const inspect = (await engine.api('GET', `/containers/${run.result.target}/json`)).body;
    t.match(inspect.HostConfig, {
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      PidsLimit: 64,
      Memory: 64 * 1024 * 1024,
      SecurityOpt: ['no-new-privileges'],
    });
    t.match(inspect.Config.Labels, { 'dev.agt.compute.tier': 'isolated', 'dev.agt.compute.agent': id });
    t.not(inspect.Config.User, '0:0');
    const listed = (await d.request('GET', '/compute')).body.containers.find(
      (info: any) => info.name === run.result.target,
    );
    t.match(listed, { tier: 'isolated', agentId: id, running: true, network: false });

    const shared = await c.agent();
    const weaker = await c.tool(id, { command: 'true', target: 'shared' });
    t.match(weaker.text, /forbidden.*may not run in shared/, 'an isolated agent cannot move to the shared container');
    const stronger = await c.tool(shared, { command: 'echo up', target: 'isolated' });
    t.match(
      stronger.result,
      { exit_code: 0, stdout: 'up\n', target: /-agent-/ },
      'a shared agent may ask for its own container',
    );
  });

  t.test('a network only for isolated agents granted one', async (t) => {
    const interfaces = async (id: string) => {
      const run = await c.tool(id, { command: 'tail -n +3 /proc/net/dev | cut -d: -f1' });
      return run.result.stdout
        .split('\n')
        .map((name: string) => name.trim())
        .filter(Boolean)
        .sort();
    };
    // The owner's ceiling lets a file's compute_network apply (default: capped to false).
    t.equal((await d.request('PATCH', '/settings', { agentCeiling: { computeNetwork: true } })).status, 200);
    const granted = await c.agent({ security: { compute_tier: 'isolated', compute_network: true } } as never);
    t.same(await interfaces(granted), ['eth0', 'lo'], 'granted: on the configured network');
    const sharedGranted = await c.agent({ security: { compute_network: true } } as never);
    t.same(await interfaces(sharedGranted), ['lo'], 'the shared container never has a network');
    const name = (await d.request('GET', '/compute')).body.containers.find(
      (info: any) => info.agentId === granted,
    ).name;
    const revoked = await d.request('PATCH', `/agents/${granted}/config`, { security: { compute_network: null } });
    t.equal(revoked.status, 200, JSON.stringify(revoked.body));
    t.same(await interfaces(granted), ['lo'], 'a revoked grant recreates the container without it');
    t.match((await d.request('GET', `/compute/containers/${name}`)).body, { network: false });
  });

  t.test('host tier: only when the owner allows it for that agent', async (t) => {
    const id = await c.agent({ security: { compute_tier: 'host', allow_unsandboxed_commands: true } } as never);
    const refused = await c.tool(id, { command: 'echo hi' });
    t.match(refused.text, /forbidden.*computeHostAgents/);
    const command = await c.command(id, 'echo hi');
    t.equal(command.event_type, 'agent.error');
    t.equal(command.payload.code, 'forbidden', 'command targets are refused the same way');
    t.equal(
      (
        await d.request('PATCH', '/settings', {
          computeHostAgents: [id],
          agentCeilings: { [id]: { allowUnsandboxedCommands: true } },
        })
      ).status,
      200,
    );
    const ran = await c.tool(id, { command: 'pwd; echo hi' });
    t.match(
      ran.result,
      { target: 'host', exit_code: 0, stdout: /^(\/work|\/.+\/sandbox\/work\/agent-.+)\nhi\n$/ },
      "the kernel's host runner, in the agent's work folder (/work in its sandbox)",
    );
    const viaCommand = await c.command(id, 'echo from-host');
    t.equal(viaCommand.event_type, 'turn.completed');
    t.match(JSON.parse(viaCommand.payload.text), { target: 'host', stdout: 'from-host\n' });
  });

  t.test('limits: time (exit 124), memory, pids, output', async (t) => {
    const id = await c.agent({ security: { compute_tier: 'isolated' }, limits: { command_timeout_ms: 500 } } as never);
    const slow = await c.tool(id, { command: 'sleep 31 & sleep 31; echo never', timeout_ms: 400 });
    t.match(slow.result, { exit_code: 124, timed_out: true, stdout: '' });
    const left = await c.tool(id, { command: 'ps -o args | grep -c "[s]leep 31" || true' });
    t.equal(left.result.stdout.trim(), '0', 'the time limit killed the command and what it started');
    const hog = await c.tool(id, { command: 'x=$(head -c 200000000 /dev/zero | tr "\\0" a); echo ${#x}' });
    t.equal(hog.result.exit_code, 137, 'killed at the memory limit');
    const forks = await c.tool(id, { command: 'for i in $(seq 1 100); do sleep 1 & done; wait; echo done' });
    t.match(forks.result.stderr, /can't fork/, 'the pid limit stops a fork flood');
    const loud = await c.tool(id, {
      command: 'head -c 2000000 /dev/zero | tr "\\0" a; head -c 700000 /dev/zero | tr "\\0" b >&2',
    });
    t.match(loud.text, /^\{"target":"[^"]+","exit_code":0,"timed_out":false,"stdout":"aaaa/);
    // The model sees the kernel's cut of a long tool result; the exec log tells what the exec kept.
    const note = Buffer.byteLength('\n[output truncated at 512 KB]');
    const [logged] = (await d.request('GET', `/compute/exec-log?agentId=${id}&limit=1`)).body.entries;
    t.match(
      logged,
      { exit_code: 0, stdout_bytes: 512 * 1024 + note, stderr_bytes: 512 * 1024 + note },
      'each stream cut at 512 KB',
    );
    const timedCommand = await c.command(id, 'sleep 30');
    t.equal(
      timedCommand.event_type,
      'agent.error',
      'a command target past its limit (limits.command_timeout_ms) fails',
    );
    t.equal(timedCommand.payload.code, 'timeout');
  });

  t.test('an interrupt kills the running exec', async (t) => {
    const id = await c.agent({ security: { compute_tier: 'isolated' } } as never);
    const before = c.model.calls.length;
    c.model.push({
      toolCalls: [{ name: 'compute_exec', args: { command: 'sleep 45; echo late', timeout_ms: 60_000 } }],
    });
    const chat = await d.request('POST', `/agents/${id}/chat`, { text: 'run it' });
    await c.until('the exec to start', () =>
      c.events.find((e) => e.event_type === 'tool.started' && e.agent_id === id),
    );
    const container = await c.until('the sleep in the container', async () => {
      const name = (await d.request('GET', '/compute')).body.containers.find((info: any) => info.agentId === id)?.name;
      if (!name) return undefined;
      const top = await engine.api('GET', `/containers/${name}/top?ps_args=-ef`);
      return top.body?.Processes?.some((row: string[]) => row.join(' ').includes('sleep 45')) ? name : undefined;
    });
    const started = Date.now();
    t.equal((await d.request('POST', `/agents/${id}/interrupt`)).body.interrupted, true);
    await c.until('the turn to end', () =>
      c.events.find(
        (e) =>
          (e.event_type === 'turn.completed' || e.event_type === 'agent.error') &&
          e.agent_id === id &&
          (e.payload as any).turn_id === chat.body.turnId,
      ),
    );
    t.ok(Date.now() - started < 30_000, 'the turn did not wait for the sleep');
    await c.until('the sleep to be killed', async () => {
      const top = await engine.api('GET', `/containers/${container}/top?ps_args=-ef`);
      return !top.body?.Processes?.some((row: string[]) => row.join(' ').includes('sleep 45'));
    });
    t.ok(c.model.calls.length >= before + 1);
  });

  t.test('a container removed or stopped behind the daemon is brought back', async (t) => {
    const id = await c.agent({ security: { compute_tier: 'isolated' } } as never);
    const first = await c.tool(id, { command: 'echo kept > f; echo one' });
    const name = first.result.target;
    t.equal((await engine.api('DELETE', `/containers/${name}?force=true`)).status, 204);
    const second = await c.tool(id, { command: 'cat f' });
    t.match(
      second.result,
      { exit_code: 0, target: name, stdout: 'kept\n' },
      `recreated, with its work volume: ${second.text}`,
    );
    t.equal((await engine.api('POST', `/containers/${name}/stop?t=0`)).status, 204);
    const third = await c.tool(id, { command: 'echo three' });
    t.match(third.result, { exit_code: 0, stdout: 'three\n' }, 'started again');
  });

  t.test('routes: containers, start, stop, destroy, exec log', async (t) => {
    const id = await c.agent({ security: { compute_tier: 'isolated' } } as never);
    const name = (await c.tool(id, { command: 'echo x > f' })).result.target;
    t.match((await d.request('GET', `/compute/containers/${name}`)).body, {
      name,
      running: true,
      tier: 'isolated',
      agentId: id,
    });
    t.equal((await d.request('GET', '/compute/containers/not-ours')).status, 404);
    t.match((await d.request('POST', `/compute/containers/${name}/stop`)).body, { running: false });
    t.match((await d.request('POST', `/compute/containers/${name}/start`)).body, { running: true });
    t.same((await d.request('POST', `/compute/containers/${name}/destroy`)).body, { success: true });
    t.equal((await d.request('GET', `/compute/containers/${name}`)).status, 404);
    t.equal((await engine.api('GET', `/volumes/${name}-work`)).status, 404, 'its work volume is gone too');
    const fresh = await c.tool(id, { command: 'cat f 2>&1; echo new' });
    t.match(fresh.result.stdout, /No such file[\s\S]*new/, 'the next exec starts from an empty work dir');

    const log = (await d.request('GET', `/compute/exec-log?agentId=${id}`)).body.entries;
    t.equal(log.length, 2);
    t.match(log[0], {
      agentId: id,
      origin: 'tool',
      target: name,
      command: 'cat f 2>&1; echo new',
      exit_code: 0,
      timed_out: false,
      error: null,
    });
    t.ok(log[0].id > log[1].id, 'newest first');
    t.ok((await d.request('GET', '/compute/exec-log?limit=1')).body.entries.length === 1);
    t.equal((await d.request('GET', '/compute/exec-log?limit=0')).status, 400);

    const tools = (await d.request('GET', `/agents/${id}/tools`)).body.tools;
    t.match(
      tools.find((tool: any) => tool.name === 'compute_exec'),
      { source: 'ext:compute', enabled: true },
    );
    const guarded = await c.agent({}, { restricted: true });
    t.match(
      (await d.request('GET', `/agents/${guarded}/tools`)).body.tools.find((tool: any) => tool.name === 'compute_exec'),
      { restricted: true },
      'restricted by default',
    );
  });
});

t.test('an engine that is not there', async (t) => {
  const c = await bootCompute(t, 'unix:///tmp/agt-no-such-engine.sock');
  const status = await c.d.request('GET', '/compute');
  t.equal(status.status, 200, 'the status says what is missing');
  t.match(status.body, {
    engine: { reachable: false, version: null, host: 'unix:///tmp/agt-no-such-engine.sock' },
    missing: ['engine'],
    containers: [],
  });
  const setup = await c.d.request('POST', '/compute/setup', {});
  t.equal(setup.status, 503);
  t.match(setup.body, {
    code: 'unavailable',
    error: /Docker engine at unix:\/\/\/tmp\/agt-no-such-engine.sock is not reachable/,
  });
  t.equal((await c.d.request('GET', '/compute/exec-log')).status, 200, "the exec log is the daemon's own");
  t.equal((await c.d.request('GET', '/compute/containers/x')).status, 503);
  const id = await c.agent();
  const call = await c.tool(id, { command: 'true' });
  t.ok(call.isError);
  t.match(call.text, /compute_exec failed \(unavailable\): the Docker engine .* is not reachable/);
  const command = await c.command(id, 'true');
  t.equal(command.event_type, 'agent.error');
  t.equal(command.payload.code, 'unavailable', 'a command target fails, it never falls back to the host');
  t.equal((await c.d.request('GET', '/health')).status, 200, 'the rest of the daemon keeps working');
  t.match((await c.d.request('GET', `/compute/exec-log?agentId=${id}`)).body.entries[0], {
    target: null,
    error: /not reachable/,
  });
});
