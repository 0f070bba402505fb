/**
 * The build keeps CommonJS SDKs whose named exports esbuild's interop cannot see out of the bundle:
 * bundled, `GatewayIntentBits` (discord.js), `Bot` (grammy) and `App` (Bolt) came out undefined, so the
 * Discord, Telegram and Slack adapters of a built daemon (`npm start`) failed to connect while the
 * tests, which run the sources, passed. Checked on the build `npm test` makes: each SDK is imported by
 * name from the built module, and Node's own loader gives the names the adapters use.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from './helpers/daemon.js';

const BUILT = join(ROOT, 'dist/extensions/channels/index.js');
const USED: Record<string, string[]> = {
  'discord.js': ['Client', 'Events', 'GatewayIntentBits', 'Partials'],
  grammy: ['Bot', 'GrammyError'],
  '@slack/bolt': ['App', 'LogLevel', 'SocketModeReceiver'],
};

t.test('channel SDKs stay external and give their named exports', { skip: existsSync(BUILT) ? false : 'no build in dist/ (npm test makes it)' }, async (t) => {
  const built = readFileSync(BUILT, 'utf8');
  for (const [name, exports] of Object.entries(USED)) {
    t.match(built, `import("${name}")`, `${name} is imported at run time, not bundled`);
    const script = `const m = await import(${JSON.stringify(name)}); console.log(JSON.stringify(${JSON.stringify(exports)}.filter((n) => m[n] === undefined)))`;
    const missing = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: join(ROOT, 'dist'), encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } }));
    t.same(missing, [], `${name} gives ${exports.join(', ')} to plain Node`);
  }
});
