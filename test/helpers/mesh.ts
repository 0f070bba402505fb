/**
 * Test helpers for the mesh extension: a built daemon (the shipped extensions, the mesh's options the test's own), an
 * owner identity, agents created through the API (so they have their Ed25519 identity), the mesh URL from `GET
 * /network`, polling, and envelopes signed by keys the test holds.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { canonicalJson, didFromPublicKey, formatSignature } from '../../contracts/agent-keys.js';
import { runDaemon, shippedManifest, tempDir, type BootOptions, type SpawnedDaemon } from './daemon.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export const PASSPHRASE = 'mesh test owner';

export interface MeshDaemon extends SpawnedDaemon {
  meshUrl: string;
  agentsDir: string;
}

/** Boots a daemon with the mesh; the owner identity exists (unlocked from AGT_OWNER_PASSPHRASE after a restart). */
export async function bootMeshDaemon(
  t: Teardown,
  options: BootOptions & { meshConfig?: Record<string, unknown>; agentsDir?: string } = {},
): Promise<MeshDaemon> {
  const { meshConfig = {}, agentsDir: given, ...boot } = options;
  const d = await runDaemon(t, {
    extensions: shippedManifest({ mesh: meshConfig }),
    ...boot,
    env: { AGT_OWNER_PASSPHRASE: PASSPHRASE, ...boot.env },
  });
  const identity = (await d.request('GET', '/identity')).body;
  if (identity.status === 'none') {
    const created = await d.request('POST', '/identity/create', { passphrase: PASSPHRASE });
    if (created.status !== 201) throw new Error(`identity create: ${created.status} ${JSON.stringify(created.body)}`);
  }
  return withMesh(d, given ?? tempDir(t, 'agt-mesh-agents-'));
}

/** `d` with its mesh URL: after a restart too. */
export async function withMesh(d: SpawnedDaemon, agentsDir: string): Promise<MeshDaemon> {
  return { ...d, meshUrl: await meshUrlOf(d), agentsDir };
}

/**
 * The mesh server's URL, from its listening line on the daemon's stdout (no request: a test counting
 * connections sees only its own).
 */
export function meshUrlOf(d: SpawnedDaemon): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const found = () => /agt mesh listening on (http:\/\/\S+)/.exec(d.stdout())?.[1];
    if (found()) return resolve(found()!);
    d.child.stdout!.on('data', () => found() && resolve(found()!));
    void d.exited.then(() => reject(new Error(`the daemon exited: ${d.stderr()}`)));
  });
}

/** Creates (and loads) an agent; `patch` is merged into its config (JSON Merge Patch). */
export async function createMeshAgent(
  d: MeshDaemon,
  name: string,
  patch: Record<string, unknown> = {},
): Promise<{ id: string; did: string; filePath: string }> {
  const created = await d.request('POST', '/agents/create', { name, directory: d.agentsDir });
  if (created.status !== 201) throw new Error(`create ${name}: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.agentId as string;
  if (Object.keys(patch).length > 0) {
    const patched = await d.request('PATCH', `/agents/${id}/config`, patch);
    if (patched.status !== 200) throw new Error(`patch ${name}: ${patched.status} ${JSON.stringify(patched.body)}`);
  }
  return { id, did: created.body.did, filePath: created.body.filePath };
}

/**
 * Polls `probe` every `everyMs` until it returns something truthy (or throws after `ms`). A wait known to
 * take seconds polls less often: each probe is a request the daemon answers.
 */
export async function eventually<T>(
  probe: () => Promise<T | undefined | false | null>,
  what: string,
  ms = 15_000,
  everyMs = 25,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, everyMs));
  }
}

/** A key pair the test holds, with its DID. */
export function testKey(): { did: string; privateKey: KeyObject } {
  const pair = generateKeyPairSync('ed25519');
  const raw = new Uint8Array(pair.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
  return { did: didFromPublicKey(raw), privateKey: pair.privateKey };
}

let counter = 0;

/** An envelope from `from.did` to `to`, signed by `signer` (default `from`'s own key); `extra` joins the payload. */
export function signedEnvelope(
  from: { did: string; privateKey: KeyObject },
  to: string,
  content: string,
  signer: KeyObject = from.privateKey,
  id = `test-${process.pid}-${++counter}`,
  now = new Date().toISOString(),
  extra: Record<string, unknown> = {},
) {
  const envelope = {
    version: '1.0',
    id,
    timestamp: now,
    from: from.did,
    to,
    payload: { content, sent_at: now, ...extra },
  };
  const signature = sign(null, Buffer.from(canonicalJson(envelope), 'utf8'), signer);
  return { ...envelope, signature: formatSignature(signature) };
}

export async function postJson(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: response.status, body: parsed };
}
