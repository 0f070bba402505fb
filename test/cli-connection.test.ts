/**
 * How `agt` finds the daemon and its token: the data directory exactly as the daemon
 * resolves it (kernel/settings.ts), the URL and token sources in their order.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { dataDirOf, resolveConnection } from '../cli/connection.js';
import { readEnv } from '../kernel/env.js';
import { resolveSettingsPath } from '../kernel/settings.js';

t.test("the data directory is the daemon's, for every variable", async (t) => {
  const cases: Array<Record<string, string>> = [
    {},
    { XDG_CONFIG_HOME: '/x/config' },
    { AGT_USER_DATA_DIR: '/srv/agt', XDG_CONFIG_HOME: '/x/config' },
    { AGT_DAEMON_SETTINGS: '/etc/agt/daemon.json', AGT_USER_DATA_DIR: '/srv/agt' },
    { AGT_DAEMON_SETTINGS: 'relative/settings.json' },
  ];
  for (const env of cases) {
    const daemonDir = join(resolveSettingsPath(readEnv(env), env), '..');
    t.equal(dataDirOf({}, env), daemonDir, JSON.stringify(env));
  }
  t.equal(dataDirOf({}, {}), join(homedir(), '.config', 'agt'));
  t.equal(
    dataDirOf({ settings: '/opt/agt/settings.json' }, { AGT_USER_DATA_DIR: '/srv/agt' }),
    '/opt/agt',
    '--settings wins',
  );
});

t.test("URL and token: flags, variables, the data directory's files, the default", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'agt-cli-conn-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = { AGT_USER_DATA_DIR: dir };
  t.match(resolveConnection({}, env), {
    url: 'http://127.0.0.1:7385',
    token: undefined,
    dataDir: dir,
    urlSource: 'the default address',
  });
  writeFileSync(join(dir, 'daemon-token'), 'file-token\n');
  writeFileSync(join(dir, 'daemon-url'), 'http://127.0.0.1:41000\n');
  t.match(resolveConnection({}, env), {
    url: 'http://127.0.0.1:41000',
    token: 'file-token',
    tokenSource: join(dir, 'daemon-token'),
  });
  t.match(resolveConnection({}, { ...env, AGT_DAEMON_PORT: '9000' }), {
    url: 'http://127.0.0.1:9000',
    urlSource: 'AGT_DAEMON_HOST/AGT_DAEMON_PORT',
  });
  t.match(
    resolveConnection({}, { ...env, AGT_DAEMON_HOST: '0.0.0.0', AGT_DAEMON_PORT: '9000' }),
    { url: 'http://127.0.0.1:9000' },
    'a wildcard listen address means this machine',
  );
  const settings = { AGT_DAEMON_SETTINGS: join(dir, 'settings.json'), AGT_DAEMON_PORT: '9000' };
  t.match(
    resolveConnection({}, settings),
    { url: 'http://127.0.0.1:41000', urlSource: join(dir, 'daemon-url') },
    'a settings file names its daemon: a port left in the shell does not win',
  );
  t.match(
    resolveConnection({ settings: join(dir, 'settings.json') }, { AGT_DAEMON_PORT: '9000' }),
    { url: 'http://127.0.0.1:41000' },
    'so does --settings',
  );
  t.match(
    resolveConnection({}, { ...settings, AGT_DAEMON_URL: 'http://box:1' }),
    { url: 'http://box:1' },
    'AGT_DAEMON_URL still wins',
  );
  t.match(
    resolveConnection({}, { AGT_DAEMON_SETTINGS: join(dir, 'none', 'settings.json'), AGT_DAEMON_PORT: '9000' }),
    { url: 'http://127.0.0.1:9000' },
    'no daemon-url published there: the port',
  );
  t.match(resolveConnection({}, { ...env, AGT_DAEMON_HOST: '::1' }), { url: 'http://[::1]:7385' });
  t.match(resolveConnection({}, { ...env, AGT_DAEMON_URL: 'http://box:1/', AGT_DAEMON_TOKEN: 'env-token' }), {
    url: 'http://box:1',
    token: 'env-token',
    tokenSource: 'AGT_DAEMON_TOKEN',
  });
  t.match(
    resolveConnection(
      { url: 'http://flag:2', token: 'flag-token' },
      { ...env, AGT_DAEMON_URL: 'http://box:1', AGT_DAEMON_TOKEN: 'env-token' },
    ),
    { url: 'http://flag:2', token: 'flag-token', urlSource: '--url', tokenSource: '--token' },
  );
});
