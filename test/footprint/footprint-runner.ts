import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createLockBackend, LockEngine, type BackendOptions } from '../../lib/index.js';
import { waitUntil } from '../harness/server-process.js';

// Needs the built package (dist/esm): `npm test` builds it first.
const worker = fileURLToPath(new URL('./footprint-worker.mjs', import.meta.url));

/**
 * Distinct keys each test locks and releases once: 20,000 in the default run (a leak of one key,
 * row or node per lock would show 4,000 times over the slack), 100,000 with `npm run test:footprint`.
 */
export const FOOTPRINT_KEYS = Number(process.env.FOOTPRINT_KEYS ?? 20_000);
/** Worker processes sharing them, and claims each keeps going at once. */
const PROCESSES = 4;
const CONCURRENCY = 32;
/** Keys, rows or nodes the store may keep beyond what it held before (a root node, a lease). */
export const FOOTPRINT_SLACK = 5;
/**
 * The workers' lease: short, since a Redis key's footprint lasts its lease plus the idle time, but
 * long enough for a machine busy with other test files (a lease lapsing before its release would
 * fail the worker).
 */
export const FOOTPRINT_LEASE_MS = 5_000;

/** What the workers lock: see footprint-worker.mjs. */
export type LockKind = 'plain' | 'read' | 'fair' | 'semaphore';

/** One store under the footprint test. */
export interface FootprintStore {
  readonly name: string;
  /** The kinds of lock the store has (the keys cycle through them). */
  readonly kinds: readonly LockKind[];
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Backend options for the worker processes, with a short `idleKeyTtlMs` where the store has it. */
  options(): BackendOptions;
  /** Keys (Redis, etcd), rows (SQL) or nodes (ZooKeeper) in the store now. */
  count(): Promise<number>;
  /** Whether released keys leave something until the idle time passes (fence counters, rows) rather than nothing at all. */
  readonly keepsUntilIdle: boolean;
  /** How long, after the last release, the store may take to be back to what it held before. */
  readonly settleMs: number;
}

interface Done {
  readonly locked: number;
  readonly elapsedMs: number;
}

function runWorker(params: Record<string, unknown>): Promise<Done> {
  const child = spawn(process.execPath, [worker, JSON.stringify(params)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4_000)));
  return once(child, 'exit').then(([code]) => {
    const done = stdout.split('\n').find((line) => line.includes('"done"'));
    if (code !== 0 || !done) throw new Error(`footprint worker exited (${code}): ${stderr}`);
    return JSON.parse(done) as Done;
  });
}

/**
 * FOOTPRINT_KEYS distinct keys, each locked and released once by PROCESSES processes: once the
 * store's idle time has passed, it holds what it held before, within FOOTPRINT_SLACK.
 */
export function describeFootprint(store: FootprintStore): void {
  describe(`${store.name}: footprint after ${FOOTPRINT_KEYS.toLocaleString('en-US')} distinct keys`, () => {
    beforeAll(() => store.start(), 60_000);
    afterAll(() => store.stop(), 60_000);

    it(`is back to what it was once the keys are idle (${store.kinds.join(', ')} locks, ${PROCESSES} processes)`, async () => {
      const before = await store.count();
      const run = `fp-${randomUUID().slice(0, 8)}`;
      const share = FOOTPRINT_KEYS / PROCESSES;
      const startedAt = performance.now();
      const results = await Promise.all(
        Array.from({ length: PROCESSES }, (_, p) =>
          runWorker({
            backend: store.options(),
            keyPrefix: 'lock:',
            run,
            from: p * share,
            count: share,
            concurrency: CONCURRENCY,
            kinds: store.kinds,
            leaseMs: FOOTPRINT_LEASE_MS,
          }),
        ),
      );
      const lockedAt = performance.now();
      const lockingMs = Math.round(lockedAt - startedAt);
      const afterRun = await store.count();
      const report = (after: number) =>
        process.stdout.write(
          `footprint ${store.name}: ${before} before, ${afterRun} right after ${FOOTPRINT_KEYS} keys (${lockingMs} ms, ${Math.round((FOOTPRINT_KEYS / lockingMs) * 1000)}/s), ` +
            `${after} ${Math.round(performance.now() - lockedAt)} ms later\n`,
        );
      expect(results.reduce((sum, result) => sum + result.locked, 0)).toBe(FOOTPRINT_KEYS);
      // The workers are gone; an app instance that stays (this process) does the upkeep a store needs from its clients (SQL sweeps).
      const survivor = new LockEngine(await createLockBackend(store.options()), {
        keyPrefix: 'lock:',
        leaseMs: FOOTPRINT_LEASE_MS,
      });
      try {
        await (await survivor.acquire(`${run}:survivor`)).release();
        // The test can see a footprint: keys released in the last moments are still there (until they are idle).
        if (store.keepsUntilIdle) expect(afterRun).toBeGreaterThan(before + FOOTPRINT_SLACK);
        await waitUntil(
          `${store.name} to hold at most ${before + FOOTPRINT_SLACK}`,
          async () => (await store.count()) <= before + FOOTPRINT_SLACK,
          store.settleMs,
          100,
        ).catch(async (error: unknown) => {
          report(await store.count());
          throw error;
        });
        const after = await store.count();
        expect(after).toBeLessThanOrEqual(before + FOOTPRINT_SLACK);
        report(after);
      } finally {
        await survivor.close();
      }
    }, 600_000);
  });
}
