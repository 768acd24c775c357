// jest globalSetup: the child processes and workers of the suites import dist/, so a build older
// than lib/ would test old code without a word. Fails the run instead, naming the newer source.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The last file `npm run build` writes. */
const BUILD_STAMP = join(ROOT, 'dist/cjs/package.json');

function newestSource(dir) {
  let newest = { path: '', mtimeMs: 0 };
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path);
    const candidate = stat.isDirectory() ? newestSource(path) : { path, mtimeMs: stat.mtimeMs };
    if (candidate.mtimeMs > newest.mtimeMs) newest = candidate;
  }
  return newest;
}

export default function checkDist() {
  const missing = ['dist/esm/index.js', 'dist/cjs/index.js', 'dist/cjs/package.json'].filter(
    (file) => !existsSync(join(ROOT, file)),
  );
  if (missing.length)
    throw new Error(
      `dist/ is missing ${missing.join(', ')}: run npm run build (npm test builds first; run jest through npm test)`,
    );
  const source = newestSource(join(ROOT, 'lib'));
  if (source.mtimeMs > statSync(BUILD_STAMP).mtimeMs) {
    throw new Error(
      `dist/ is older than ${relative(ROOT, source.path)}: run npm run build (npm test builds first; run jest through npm test)`,
    );
  }
}
