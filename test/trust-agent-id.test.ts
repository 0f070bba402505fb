/**
 * An agent is its key (docs/agent-identity.md, "An agent is its key"): a file that claims the id of an
 * agent this daemon has seen with another key (another DID, or the same DID without its sealed key) is
 * refused with 409 `agent_id_conflict` at load, review accept and restore, and comes in only `asNew`,
 * under a fresh id and key, with a fresh work folder: it never reads what the agent whose id it claimed
 * left in `/work`. The binding outlives a restart. Run against the built daemon, and once more with the
 * daemon as uid 65534 when this test runs as root (the ordinary user's daemon and sandbox).
 */
import { spawn } from 'node:child_process';
import { chownSync, copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import nacl from 'tweetnacl';
import t, { type Test } from 'tap';
import { didKeyFromEd25519 } from '../kernel/identity/did-key.js';
import { HostCommandRunner } from '../kernel/runtime/sandbox/command-runner.js';
import { createAgentFile } from './helpers/agent-file.js';
import { ROOT, spawnDaemon, tempDir, type SpawnedDaemon } from './helpers/daemon.js';
import { openSse } from './helpers/sse-client.js';

const root = process.getuid?.() === 0;
const USER = 65534;
const PASSPHRASE = 'owner passphrase';

type Daemon = SpawnedDaemon;

/** The built daemon with no extensions; with `uid`, run as that user (its home and temp folder its own). */
async function startDaemon(t: Test, dataDir: string, uid?: number): Promise<Daemon> {
  const home = join(dataDir, '..', 'home');
  mkdirSync(home, { recursive: true });
  if (uid !== undefined) chownSync(home, uid, uid);
  const d = await spawnDaemon(t, { dataDir, ...(uid === undefined ? {} : { uid }), env: { HOME: home, TMPDIR: home } });
  if (!d.url) throw new Error(`the daemon did not start: ${d.stderr()}`);
  return d;
}

/** Runs `command` as a system-scope target of the agent; its stdout, or the turn's error. */
async function runCommand(
  d: Daemon,
  agentId: string,
  command: string,
): Promise<{ stdout?: string; error?: { code: string; message: string } }> {
  const stream = await openSse(`${d.url}/events`, { authorization: `Bearer ${d.token}` });
  try {
    const accepted = await d.request('POST', `/agents/${agentId}/trigger`, {
      type: 'inbox',
      data: {},
      scope: 'system',
      command,
    });
    if (accepted.status !== 202) throw new Error(`dispatch refused: ${JSON.stringify(accepted.body)}`);
    const turnId = accepted.body.turnId as string;
    for (;;) {
      const event = (await stream.nextEvent()).data?.event;
      if (event?.turn_id !== turnId && event?.payload?.turn_id !== turnId) continue;
      if (event.event_type === 'turn.completed') return { stdout: JSON.parse(event.payload.text).stdout };
      if (event.event_type === 'agent.error')
        return { error: { code: event.payload.code, message: event.payload.message } };
    }
  } finally {
    stream.close();
  }
}

/** An agent file of its own key (a DID no agent here has) that claims `id`; `did` to copy another's DID instead. */
async function claimingFile(
  dir: string,
  id: string,
  name: string,
  uid: number | undefined,
  did = didKeyFromEd25519(nacl.sign.keyPair().publicKey),
) {
  const path = await createAgentFile(dir, { id, name }, { seed: (file) => file.identity.put('agent.did', did) });
  if (uid !== undefined) chownSync(path, uid, uid);
  return { path, did };
}

/** The reproduction; `full` adds the restore and restart cases (run once: they do not depend on the daemon's uid). */
async function idConflictCases(t: Test, uid: number | undefined, sandbox: boolean | string, full: boolean) {
  const base = tempDir(t, 'agt-agent-id-');
  const dataDir = join(base, 'data');
  const agents = join(base, 'agents');
  mkdirSync(dataDir, { mode: 0o700 });
  mkdirSync(agents);
  if (uid !== undefined) for (const dir of [base, dataDir, agents]) chownSync(dir, uid, uid);
  let d = await startDaemon(t, dataDir, uid);
  t.equal((await d.request('POST', '/identity/create', { passphrase: PASSPHRASE })).status, 201);

  // The victim: the owner's agent, allowed the host tier, leaves a secret in its work folder, then stops.
  const created = await d.request('POST', '/agents/create', { name: 'Victim', directory: agents });
  t.equal(created.status, 201, JSON.stringify(created.body));
  const victim = created.body as { agentId: string; did: string; filePath: string };
  t.equal((await d.request('PATCH', '/settings', { computeHostAgents: [victim.agentId] })).status, 200);
  const commands = sandbox === true;
  if (commands) {
    t.equal((await d.request('POST', `/agents/${victim.agentId}/start`)).status, 200);
    t.same(
      await runCommand(d, victim.agentId, 'echo s3cret > /work/secret.txt; cat /work/secret.txt'),
      { stdout: 's3cret\n' },
      "the victim's secret is in its /work",
    );
  }
  t.equal((await d.request('POST', `/agents/${victim.agentId}/stop`)).status, 200);

  // Another file (its own DID, name "Hostile") claims the victim's id: refused, and so is one that copies the victim's
  // DID without its key.
  const hostile = await claimingFile(agents, victim.agentId, 'Hostile', uid);
  const backup = join(base, 'hostile-backup.agt');
  copyFileSync(hostile.path, backup);
  if (uid !== undefined) chownSync(backup, uid, uid);
  const refused = await d.request('POST', '/agents/load', { filePath: hostile.path });
  t.match(
    refused,
    {
      status: 409,
      body: { code: 'agent_id_conflict', agentId: victim.agentId, knownDid: victim.did, fileDid: hostile.did },
    },
    'another DID under a known id is refused',
  );
  const copycat = await claimingFile(agents, victim.agentId, 'Copycat', uid, victim.did);
  t.match(
    await d.request('POST', '/agents/load', { filePath: copycat.path }),
    { status: 409, body: { code: 'agent_id_conflict', fileDid: victim.did } },
    "the victim's DID without its key is refused too",
  );
  t.match(
    await d.request('POST', '/agents/review/accept', { filePath: hostile.path }),
    { status: 409, body: { code: 'agent_id_conflict' } },
    'no review mark under the claimed id',
  );
  t.match(await d.request('GET', `/agents/review?filePath=${encodeURIComponent(hostile.path)}`), {
    status: 200,
    body: { reviewed: false },
  });
  t.equal((await d.request('GET', '/agents')).body.length, 0, 'nothing loaded');

  // asNew: a new id and key, and a fresh work folder without the victim's secret.
  const asNew = await d.request('POST', '/agents/load', { filePath: hostile.path, asNew: true });
  t.equal(asNew.status, 200, JSON.stringify(asNew.body));
  const newId = asNew.body.id as string;
  t.not(newId, victim.agentId, 'a new id');
  t.equal(asNew.body.config.id, newId, 'written into its file');
  const newDid = (await d.request('GET', `/agents/${newId}/identity`)).body.did;
  t.ok(newDid && newDid !== victim.did && newDid !== hostile.did, 'a new key');
  if (commands) {
    t.equal((await d.request('POST', `/agents/${newId}/start`)).status, 200);
    t.same(
      await runCommand(d, newId, 'cat /work/secret.txt 2>/dev/null || echo none; ls -A /work | wc -l'),
      { stdout: 'none\n0\n' },
      "an empty work folder: the victim's secret is out of reach",
    );
  } else t.comment(`the work-folder cases skip: ${sandbox}`);
  t.match(
    await d.request('POST', '/agents/load', { filePath: hostile.path, asNew: true }),
    { status: 409, body: { code: 'conflict' } },
    'a loaded file is not made new again',
  );

  // The victim's own file loads, and its work folder is still its own.
  t.match(await d.request('POST', '/agents/load', { filePath: victim.filePath }), {
    status: 200,
    body: { id: victim.agentId },
  });
  if (commands) {
    t.equal((await d.request('POST', `/agents/${victim.agentId}/start`)).status, 200);
    t.same(await runCommand(d, victim.agentId, 'cat /work/secret.txt'), { stdout: 's3cret\n' });
  }

  if (!full) return d.stop();

  // A backup whose config claims the id with another key: refused while the victim is loaded and once it is only known;
  // nothing is placed.
  const restoreTo = join(agents, 'restored.agt');
  t.match(
    await d.request('POST', '/agents/restore', { from: backup, to: restoreTo }),
    { status: 409, body: { code: 'agent_id_conflict', agentId: victim.agentId } },
    'a loaded agent id',
  );
  t.equal((await d.request('POST', `/agents/${victim.agentId}/stop`)).status, 200);
  t.match(
    await d.request('POST', '/agents/restore', { from: backup, to: restoreTo }),
    { status: 409, body: { code: 'agent_id_conflict' } },
    'a known agent id',
  );
  t.notOk(existsSync(restoreTo), 'nothing restored');
  const restoredNew = await d.request('POST', '/agents/restore', { from: backup, to: restoreTo, asNew: true });
  t.equal(restoredNew.status, 200, JSON.stringify(restoredNew.body));
  t.not(restoredNew.body.agentId, victim.agentId, 'asNew restores it under a new id');

  // The binding is kept in the data directory: after a restart the claim is still refused, the victim still loads.
  await d.stop();
  d = await startDaemon(t, dataDir, uid);
  const again = await claimingFile(agents, victim.agentId, 'Hostile Again', uid);
  t.match(
    await d.request('POST', '/agents/load', { filePath: again.path }),
    { status: 409, body: { code: 'agent_id_conflict' } },
    'refused after a restart',
  );
  t.match(await d.request('POST', '/agents/load', { filePath: victim.filePath }), {
    status: 200,
    body: { id: victim.agentId },
  });
  await d.stop();
}

// Whether commands can run in a sandbox here (the work-folder cases need one; the refusals do not).
const probe = await new HostCommandRunner({ dataDir: tempDir(t, 'agt-agent-id-probe-') }).probe();
const sandbox = probe.available ? true : `no sandbox can be made here: ${probe.reason}`;

t.test(`two files, one id, two keys (daemon as uid ${process.getuid?.()})`, async (t) => {
  await idConflictCases(t, undefined, sandbox, true);
});

t.test(
  `the same as an ordinary user (daemon as uid ${USER}, from root)`,
  { skip: root ? false : 'the test runs as an ordinary user already' },
  async (t) => {
    // Its sandbox is bwrap's user namespace, which a host may refuse an ordinary user: then only the refusals run.
    const asUser = await new Promise<string>((done) => {
      const probeDir = tempDir(t, 'agt-agent-id-probe-');
      chownSync(probeDir, USER, USER);
      const script = `import { HostCommandRunner } from ${JSON.stringify(join(ROOT, 'kernel/runtime/sandbox/command-runner.ts'))}; const s = await new HostCommandRunner({ dataDir: ${JSON.stringify(probeDir)} }).probe(); process.stdout.write(s.available ? 'yes' : s.reason);`;
      const child = spawn(
        'setpriv',
        [
          `--reuid=${USER}`,
          `--regid=${USER}`,
          '--clear-groups',
          process.execPath,
          '--import=tsx',
          '--input-type=module',
          '-e',
          script,
        ],
        { cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: probeDir } },
      );
      let out = '';
      child.stdout.on('data', (chunk) => (out += chunk));
      child.once('exit', () => done(out));
    });
    await idConflictCases(
      t,
      USER,
      asUser === 'yes' ? true : `no sandbox as uid ${USER} here: ${asUser || 'the probe failed'}`,
      false,
    );
  },
);

t.test("a runner hands an id's work folder only to the key it is bound to", async (t) => {
  const dataDir = tempDir(t, 'agt-agent-id-runner-');
  const runner = new HostCommandRunner({ dataDir, sandbox: false, holdsKey: (agentId) => agentId === 'agt-bound' });
  const call = { command: 'echo hi', stdin: '', trigger: 'test', allowUnsandboxed: true };
  t.same((await runner.run({ ...call, agentId: 'agt-bound' })).stdout, 'hi\n');
  await t.rejects(runner.run({ ...call, agentId: 'agt-other' }), { code: 'agent_id_conflict' });
  t.notOk(existsSync(runner.workFolder('agt-other')), 'no folder made for it');
});
