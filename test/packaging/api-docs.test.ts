/**
 * The API reference (docs/api/, typedoc + typedoc-plugin-markdown, `npm run docs`) builds without a
 * warning — typedoc.json has `validation.notDocumented` and `treatWarningsAsErrors`, so an exported
 * name without TSDoc fails here — and the committed pages are what the sources generate today.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const COMMITTED = join(ROOT, 'docs/api');
const out = mkdtempSync(join(tmpdir(), 'ndl-api-docs-'));
let run: { code: number; output: string };

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

beforeAll(async () => {
  const typedoc = join(ROOT, 'node_modules/typedoc/bin/typedoc');
  run = await new Promise((done) => {
    execFile(
      process.execPath,
      [typedoc, '--out', out, '--logLevel', 'Warn'],
      { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '' }, timeout: 170_000 },
      (error, stdout, stderr) => {
        done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` });
      },
    );
  });
}, 180_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('API reference', () => {
  it('builds with no warning (every exported name documented, every link resolved)', () => {
    // eslint-disable-next-line no-control-regex -- ANSI colour codes
    expect(run.output.replace(/\x1b\[[0-9;]*m/g, '').trim()).toBe('');
    expect(run.code).toBe(0);
  });

  it('docs/api is up to date with the sources (run `npm run docs` and commit the result)', () => {
    expect(files(COMMITTED)).toEqual(files(out));
    const stale = files(out).filter(
      (file) => readFileSync(join(out, file), 'utf8') !== readFileSync(join(COMMITTED, file), 'utf8'),
    );
    expect(stale).toEqual([]);
  });
});
