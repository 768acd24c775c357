/**
 * Every relative link and image in every Markdown file the package ships resolves to a file the
 * package ships, so the README and docs/ read the same in node_modules and on the registry page
 * as in a clone. The list of shipped files is npm's own (`npm pack --dry-run --json`).
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { markdownHeadings, markdownLinks } from '../support/markdown.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

let shipped: Set<string>;

beforeAll(() => {
  const env = { ...process.env, NODE_OPTIONS: '' };
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '--loglevel=error'], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
  });
  const [pack] = JSON.parse(out.slice(out.indexOf('['))) as { files: { path: string }[] }[];
  shipped = new Set(pack.files.map((f) => f.path));
}, 60_000);

describe('links in the shipped Markdown', () => {
  it('ships the README, the changelog and the docs index', () => {
    for (const file of ['README.md', 'CHANGELOG.md', 'docs/README.md', 'docs/api/README.md'])
      expect(shipped).toContain(file);
  });

  // A link to a folder (`backends/`) shows nothing on a registry page and in most Markdown viewers: link a page.
  it('every relative link and image resolves to a shipped file, never to a folder', () => {
    const broken: string[] = [];
    for (const file of [...shipped].filter((f) => f.endsWith('.md'))) {
      const text = readFileSync(resolve(ROOT, file), 'utf8');
      for (const { target, line } of markdownLinks(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue; // another site, or an anchor on this page
        const path = decodeURIComponent(target.replace(/[?#].*$/, ''));
        const joined = posix.normalize(posix.join(posix.dirname(file), path));
        if (joined.startsWith('..') || !shipped.has(joined)) broken.push(`${file}:${line}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every shipped page has one `#` title, then sections from `##` down without skipping a level', () => {
    const bad: string[] = [];
    for (const file of [...shipped].filter((f) => f.endsWith('.md'))) {
      const levels = markdownHeadings(readFileSync(resolve(ROOT, file), 'utf8')).map((h) => h.level);
      if (levels[0] !== 1 || levels.filter((level) => level === 1).length !== 1)
        bad.push(`${file}: the title is not the one '#' heading`);
      levels.forEach((level, i) => {
        if (i > 0 && level > levels[i - 1] + 1)
          bad.push(`${file}: heading ${i + 1} skips from ${levels[i - 1]} to ${level}`);
      });
    }
    expect(bad).toEqual([]);
  });

  it('finds links the way a reader sees them (the checker itself)', () => {
    const links = markdownLinks(
      '[a](x.md) ![b](img/y.png "t") `[c](no.md)`\n```ts\n[d](no2.md)\n```\n<img src="z.png">\n[e]: ref.md',
    );
    expect(links.map((l) => l.target)).toEqual(['x.md', 'img/y.png', 'z.png', 'ref.md']);
  });
});
