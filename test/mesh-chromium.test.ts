/**
 * An agent website opened in a real browser: Debian's headless Chromium loads `/agents/{handle}/` from
 * the mesh server, renders its `index.html` with the linked stylesheet (the page's background comes from
 * `style.css` only), and saves a screenshot in the test's temporary folder. Skips, saying why, when
 * Chromium is not installed (`apt-get install chromium`).
 */
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { tempDir } from './helpers/daemon.js';
import { bootMeshDaemon, createMeshAgent } from './helpers/mesh.js';

const browser = ['chromium', 'chromium-browser'].find(
  (name) => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0,
);

/**
 * The colour of the first pixel of an 8-bit RGB/RGBA PNG (whatever the row filter, pixel 0 of row 0 is stored as is).
 */
function firstPixel(png: Buffer): number[] {
  let offset = 8;
  let colorType = 0;
  const data: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('ascii', offset + 4, offset + 8);
    const body = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') colorType = body[9]!;
    if (type === 'IDAT') data.push(body);
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  return [...raw.subarray(1, colorType === 6 ? 5 : 4)];
}

const skip = browser ? false : 'Chromium is not installed (apt-get install chromium): the browser test did not run';
if (skip) t.comment(skip);

t.test('headless Chromium renders an agent website with its stylesheet', { skip }, async (t) => {
  if (!browser) return;
  const d = await bootMeshDaemon(t, { meshConfig: { mdns: { enabled: false } } });
  const site = await createMeshAgent(d, 'Web', { handle: 'web', serving: { public: { enabled: true } } });
  const put = (path: string, content: string) =>
    d.request('PUT', `/agents/${site.id}/files/content?path=${encodeURIComponent(path)}`, { content });
  await put(
    'public/index.html',
    '<!doctype html><html><head><title>Agent Web</title><link rel="stylesheet" href="style.css"></head><body><h1 id="title">Hello from an agent</h1></body></html>',
  );
  await put('public/style.css', 'html, body { background: rgb(0, 160, 80); margin: 0; } h1 { color: white; }');
  const dir = tempDir(t, 'agt-chromium-');
  const shot = join(dir, 'agent-website.png');
  const url = `${d.meshUrl}/agents/web/`;
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--no-first-run',
    `--user-data-dir=${join(dir, 'profile')}`,
    '--window-size=640,480',
    '--hide-scrollbars',
  ];
  const run = (extra: string[]) =>
    new Promise<{ code: number | null; out: string }>((done) => {
      const child = spawn(browser, [...args, ...extra, url], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (chunk) => (out += chunk));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        done({ code, out });
      });
    });
  const dom = await run(['--dump-dom']);
  t.match(dom.out, /<h1 id="title">Hello from an agent<\/h1>/, 'the page rendered');
  t.match(dom.out, /<title>Agent Web<\/title>/);
  const result = await run([`--screenshot=${shot}`]);
  t.equal(result.code, 0, 'chromium took the screenshot');
  t.ok(existsSync(shot), `screenshot saved at ${shot}`);
  const [r, g, b] = firstPixel(readFileSync(shot));
  t.same([r, g, b], [0, 160, 80], 'the background comes from the linked stylesheet');
});
