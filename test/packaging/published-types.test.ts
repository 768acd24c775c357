/**
 * What the built declarations (dist/, made by `npm test`'s pretest build) show users: the root
 * entry holds what applications use, the store-author contract sits in `./backend`, and no
 * `@internal` member of the engine reaches a published .d.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BUILDS = ['dist/esm', 'dist/cjs'];

/** Engine members the Nest layer calls that users must not see (tagged `@internal`, removed by `stripInternal`). */
const INTERNAL_NAMES = [
  'acquireScoped',
  'checkOptions',
  'CheckedLockOptions',
  'LockEventHub',
  'noteSkipped',
  'SELF_WAIT_NOTICE_MS',
];

const STORE_CONTRACT = [
  'LockBackend',
  'LockClaim',
  'ClaimRequest',
  'AttemptResult',
  'Acquired',
  'Busy',
  'BackendCapabilities',
  'LockInspection',
  'StoredHolder',
  'StoredWaiter',
  'StoredLockState',
  'ListRequest',
  'ListPage',
];
const NEST_INTERNALS = [
  'LOCKED_METADATA',
  'LOCK_ENGINE',
  'LEADERSHIP_METADATA',
  'DEFAULT_KEY_PREFIX',
  'DEFAULT_LEASE_MS',
  'DEFAULT_WAIT_MS',
  'DEFAULT_STORE_NAME',
  'DEFAULT_JOB_MIN_HOLD_MS',
  'DEFAULT_FENCE_TABLE',
];

function declarationFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? declarationFiles(path) : name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The names a built entry's declaration file exports (values and types), as a compiler resolves them. */
function exportedNames(entry: string): string[] {
  const program = ts.createProgram([entry], {
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  });
  const source = program.getSourceFile(entry)!;
  const checker = program.getTypeChecker();
  return checker.getExportsOfModule(checker.getSymbolAtLocation(source)!).map((symbol) => symbol.name);
}

describe('published declarations', () => {
  it.each(BUILDS)('%s: no .d.ts names an internal engine member', (build) => {
    const leaks = declarationFiles(join(ROOT, build)).flatMap((file) => {
      const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, ''); // declarations, not the docs that mention them
      return INTERNAL_NAMES.filter((name) => new RegExp(`\\b${name}\\b`).test(text)).map(
        (name) => `${file.slice(ROOT.length + 1)}: ${name}`,
      );
    });
    expect(leaks).toEqual([]);
  });

  it.each(BUILDS)(
    '%s: the root entry exports what applications use, not the store contract nor Nest internals',
    (build) => {
      const names = exportedNames(join(ROOT, build, 'index.d.ts'));
      expect(names).toEqual(
        expect.arrayContaining([
          'DistributedLockModule',
          'LockService',
          'Locked',
          'LockEngine',
          'MemoryBackend',
          'createLockBackend',
          'getLockServiceToken',
          'DISTRIBUTED_LOCK_MODULE_OPTIONS',
          'LockTimeoutError',
        ]),
      );
      expect(names.filter((name) => STORE_CONTRACT.includes(name) || NEST_INTERNALS.includes(name))).toEqual([]);
    },
  );

  it.each(BUILDS)('%s: the backend entry exports the store contract and its test suite', (build) => {
    const names = exportedNames(join(ROOT, build, 'backend.d.ts'));
    expect(names).toEqual(expect.arrayContaining([...STORE_CONTRACT, 'describeLockBackendContract']));
  });
});
