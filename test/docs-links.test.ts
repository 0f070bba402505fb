/**
 * The README is a landing page that points into docs/: every relative link of README.md and docs/*.md names
 * a file that exists and, with a `#fragment`, a heading of that page (GitHub's anchor rule); and the README's
 * layout table names every folder of kernel/ and every top-level folder git does not ignore.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import t from 'tap';
import { ROOT } from './helpers/daemon.js';

const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The text outside fenced code blocks, where Markdown links and headings are. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, text] of prose(markdown).matchAll(/^#+ (.+)$/gm)) {
    const slug = text!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replaceAll(' ', '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

t.test('every relative link of the README and docs/ resolves, anchors included', async (t) => {
  t.ok(anchors("# Agents' host commands\n## A, b\n## A, b").has('a-b-1'), 'the anchor rule numbers repeats');
  const broken: string[] = [];
  let checked = 0;
  for (const page of PAGES) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    for (const [, url] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(url!)) continue; // https:, mailto:
      const [path, fragment] = url!.split('#') as [string, string | undefined];
      const target = path ? join(dirname(join(ROOT, page)), path) : join(ROOT, page);
      checked++;
      if (!existsSync(target)) broken.push(`${page}: ${url} (no such file)`);
      else if (fragment && target.endsWith('.md') && !anchors(readFileSync(target, 'utf8')).has(fragment))
        broken.push(`${page}: ${url} (no such heading in ${relative(ROOT, target)})`);
    }
  }
  t.ok(checked > 100, `links checked: ${checked}`);
  t.same(broken, [], 'no broken link');
});

t.test("the README's layout table names every kernel folder and every top-level folder", async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const layout = readme.slice(readme.indexOf('## Repository layout'));
  const folders = (dir: string) =>
    readdirSync(join(ROOT, dir)).filter(
      (name) => !name.startsWith('.') && statSync(join(ROOT, dir, name)).isDirectory(),
    );
  // Folders git ignores (node_modules/, dist/, ...) are not the project's.
  const ignored = new Set(
    [...readFileSync(join(ROOT, '.gitignore'), 'utf8').matchAll(/^\/?([\w.-]+)\/$/gm)].map((m) => m[1]!),
  );
  const expected = [
    ...folders('kernel').map((name) => `kernel/${name}/`),
    ...folders('.')
      .filter((name) => !ignored.has(name))
      .map((name) => `${name}/`),
  ];
  t.ok(expected.includes('kernel/runtime/'), 'the folders are read');
  t.same(
    expected.filter((folder) => !layout.includes(`| \`${folder}\``)),
    [],
    'a row for each (add one to the README when a folder is added)',
  );
});
