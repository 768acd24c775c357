#!/usr/bin/env node
// Runs one store's test suites: `npm run test:store -- <store> [jest options]` (npm test builds first).
// A test file belongs to a store when it sits in test/<store>/ or its name starts with `<store>.` or
// `<store>-` (postgres.contract.test.ts, redis-fence-guard.test.ts); `sql` files belong to postgres and mysql.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const STORES = ['memory', 'redis', 'redlock', 'zookeeper', 'etcd', 'postgres', 'mysql'];
/** Prefixes shared by several stores. */
const SHARED = { postgres: ['sql'], mysql: ['sql'] };
/** Files that belong to a store without its name. */
const EXTRA = { memory: ['test/contract/node-test-runner.test.ts'] };

function testFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? testFiles(path) : name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

/** The test files of `store`, sorted. */
export function storeTestFiles(store) {
  const names = [store, ...(SHARED[store] ?? [])];
  const belongs = (file) =>
    names.some(
      (name) =>
        file.startsWith(`test/${name}/`) ||
        basename(file).startsWith(`${name}.`) ||
        basename(file).startsWith(`${name}-`),
    );
  return [...testFiles(join(ROOT, 'test')).filter(belongs), ...(EXTRA[store] ?? [])].sort();
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [store, ...jestArgs] = process.argv.slice(2);
  if (!STORES.includes(store)) {
    console.error(`Usage: npm run test:store -- <store> [jest options]\n  <store>: one of ${STORES.join(', ')}`);
    process.exit(2);
  }
  const files = storeTestFiles(store);
  console.log(`${store}: ${files.length} test files\n  ${files.join('\n  ')}`);
  const run = spawnSync('npm', ['test', '--', ...files, ...jestArgs], { cwd: ROOT, stdio: 'inherit' });
  process.exit(run.status ?? 1);
}
