#!/usr/bin/env node
// The test files `npm run test:unit` runs: those that start no server, no process and no browser and
// read nothing built, so they run from lib/ through ts-jest without `npm run build`. A file is left out
// when it, or a test helper it imports (followed through relative imports inside test/), reaches one of
// NEEDS below. `node scripts/unit-tests.mjs` lists the files left out and why.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TEST = join(ROOT, 'test');

/** What a test needs that the unit run does not give it, each found by a pattern in its source or its helpers'. */
const NEEDS = [
  { what: 'a server (test/harness/)', pattern: /['"][./]*\/harness\/(?!free-port\.js['"])/ },
  { what: 'a child process', pattern: /['"](node:)?child_process['"]/ },
  { what: 'a browser', pattern: /['"]playwright-core['"]/ },
  { what: 'the build (dist/)', pattern: /\bdist\// },
];

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

function testFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? testFiles(path) : name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The helper a relative import names, if it is a test file (lib/ and packages are not followed). */
function resolveImport(from, specifier) {
  const path = resolve(dirname(from), specifier);
  if (!path.startsWith(TEST + '/')) return undefined;
  return [path.replace(/\.js$/, '.ts'), path].find(
    (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
  );
}

/** What `file` needs beyond the unit run, with the file that needs it; empty when it runs from source alone. */
export function needsOf(file, seen = new Set()) {
  if (seen.has(file)) return [];
  seen.add(file);
  const source = readFileSync(file, 'utf8');
  const own = NEEDS.filter(({ pattern }) => pattern.test(source)).map(
    ({ what }) => `${what} in ${relative(ROOT, file)}`,
  );
  const helpers = [...source.matchAll(IMPORT)].map(([, specifier]) => resolveImport(file, specifier)).filter(Boolean);
  return [...own, ...helpers.flatMap((helper) => needsOf(helper, seen))];
}

/** The unit test files, relative to the repository, sorted. */
export function unitTestFiles() {
  return testFiles(TEST)
    .filter((file) => needsOf(file).length === 0)
    .map((file) => relative(ROOT, file))
    .sort();
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const all = testFiles(TEST).sort();
  const unit = unitTestFiles();
  console.log(`npm run test:unit: ${unit.length} of ${all.length} test files\n  ${unit.join('\n  ')}\n\nLeft out:`);
  for (const file of all) {
    const needs = needsOf(file);
    if (needs.length) console.log(`  ${relative(ROOT, file)}: needs ${needs[0]}`);
  }
}
