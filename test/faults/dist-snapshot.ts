import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * A private copy of the built package (dist/esm) for child processes. Other test runs in the same
 * tree rebuild dist/ (rm -rf first) at any time; children importing it directly could find it
 * missing. `npm test` builds before jest starts, so a complete build exists at some moment: wait
 * for one (dist/cjs/package.json is written last), copy it, and check that the copy loads.
 * The copy lives under node_modules/.cache so that it resolves the project's dependencies.
 */
/** Resolves the copy's directory URL (ending in `/`). */
export async function snapshotDist(): Promise<{ url: string; remove(): void }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    mkdirSync('node_modules/.cache', { recursive: true });
    const dir = mkdtempSync(join(process.cwd(), 'node_modules/.cache/ndl-dist-'));
    try {
      if (existsSync('dist/cjs/package.json')) {
        cpSync('dist/esm', dir, { recursive: true });
        writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
        const url = pathToFileURL(dir).href + '/';
        execFileSync(
          process.execPath,
          ['--input-type=module', '-e', `await import(${JSON.stringify(url + 'index.js')})`],
          { stdio: 'ignore' },
        );
        return { url, remove: () => rmSync(dir, { recursive: true, force: true }) };
      }
    } catch {
      // caught mid-rebuild: try again
    }
    rmSync(dir, { recursive: true, force: true });
    if (Date.now() > deadline)
      throw new Error('no complete build in dist/ (run `npm run build`, or test through `npm test`)');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
