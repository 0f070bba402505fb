/**
 * Extension lifecycle in the built daemon: register and start in dependency order, stop in reverse
 * order, and a daemon whose extension never finishes stopping still exits, the others stopped (shut down
 * over HTTP). What only the kernel shows (stop at most once, the rows after stop): the -internals file.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runDaemon, tempDir } from './helpers/daemon.js';
import { daemonStarted } from './helpers/daemon-started.js';

const fixture = (name: string) => join(ROOT, 'test/fixtures/extensions', name, 'index.ts');
const lines = (file: string) => readFileSync(file, 'utf8').trim().split('\n');

t.test(
  'dependency order at start, reverse at stop; a stop that never resolves does not keep the daemon from exiting',
  async (t) => {
    const recordFile = join(tempDir(t), 'calls.log');
    const daemon = await runDaemon(t, {
      extensions: {
        extensions: [
          // needs-hello comes first on purpose: dependency order must still put hello before it.
          { name: 'needs-hello', module: fixture('needs-hello'), config: { recordFile } },
          { name: 'hello', module: fixture('hello'), config: { recordFile } },
          { name: 'hangs-on-stop', module: fixture('hangs-on-stop') },
        ],
      },
    });
    t.ok(daemon.url, `daemon listening (stderr: ${daemon.stderr()})`);
    await daemonStarted(t, daemon);
    t.same(lines(recordFile), ['hello:register', 'needs-hello:register', 'hello:start', 'needs-hello:start']);
    const res = await daemon.request('POST', '/daemon/shutdown');
    t.equal(res.status, 202);
    t.equal(await daemon.exited, 0, 'exits with 0 after the stop deadline');
    t.same(
      lines(recordFile).slice(4),
      ['needs-hello:stop', 'hello:stop'],
      'reverse order, each once; the extensions stopped after the hanging one still stopped',
    );
  },
);
