/**
 * The secrets promise end to end, in a spawned daemon with debug logging and the production KDF cost:
 * after `POST /identity/create`, neither the seed phrase nor the passphrase appears in any response,
 * in the daemon's stdout/stderr, or in any file of the data directory.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { PRODUCTION_KDF } from '../kernel/identity/kdf.js';
import { spawnDaemon } from './helpers/daemon.js';

const PASSPHRASE = 'a passphrase that must never leak';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

t.test('no secret in responses, logs or files after create', async (t) => {
  const d = await spawnDaemon(t, { env: { AGT_LOG_LEVEL: 'debug', AGT_KDF_COST: '17' } });
  t.ok(d.url, 'daemon started');
  const token = readFileSync(join(d.dataDir, 'daemon-token'), 'utf8').trim();
  const seen: string[] = [];
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(d.url + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, text, body: JSON.parse(text) };
  };

  const created = await call('POST', '/identity/create', { passphrase: PASSPHRASE });
  t.equal(created.status, 201);
  const phrase: string = created.body.seedPhrase;
  const stored = JSON.parse(readFileSync(join(d.dataDir, 'owner-secrets.json'), 'utf8'));
  t.match(
    stored.kdf,
    { name: 'scrypt', N: PRODUCTION_KDF.N, r: PRODUCTION_KDF.r, p: PRODUCTION_KDF.p },
    'memory-hard defaults',
  );

  for (const [method, path, body] of [
    ['GET', '/identity'],
    ['POST', '/identity/confirm-backup'],
    ['POST', '/identity/lock'],
    ['POST', '/identity/unlock', { passphrase: 'wrong passphrase' }],
    ['POST', '/identity/unlock', { passphrase: PASSPHRASE }],
    ['POST', '/identity/restore', { seedPhrase: phrase, passphrase: PASSPHRASE }],
    ['POST', '/identity/create', { passphrase: PASSPHRASE }],
    ['GET', '/identity'],
    ['GET', '/openapi.json'],
  ] as Array<[string, string, unknown?]>) {
    const res = await call(method, path, body);
    t.ok(res.status < 500, `${method} ${path} answered ${res.status}`);
    seen.push(res.text);
  }
  t.equal(JSON.parse(seen[seen.length - 2]!).status, 'ready', 'the round trip ends ready');

  d.child.kill('SIGTERM');
  t.equal(await d.exited, 0, 'clean shutdown');
  t.match(d.stderr(), /identity/, 'debug logs were captured');

  const words = phrase.split(' ');
  const secrets = [phrase, PASSPHRASE, ...words.slice(0, -2).map((_, i) => words.slice(i, i + 3).join(' '))];
  const haystacks: Array<[string, string]> = [
    ...seen.map((text, i) => [`response ${i}`, text] as [string, string]),
    ['stdout', d.stdout()],
    ['stderr', d.stderr()],
    ...filesUnder(d.dataDir).map((path) => [path, readFileSync(path, 'latin1')] as [string, string]),
  ];
  let leaks = 0;
  for (const [where, text] of haystacks) {
    for (const secret of secrets) {
      if (text.includes(secret)) {
        leaks++;
        t.fail(`${where} contains a secret`);
      }
    }
  }
  t.equal(leaks, 0, `no secret in ${haystacks.length} places`);
});
