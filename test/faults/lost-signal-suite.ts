import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createLockBackend, LockEngine, type Lock } from '../../lib/index.js';
import type { BackendConfig } from '../../lib/backends/backend-options.js';
import { DEFAULT_DRIFT_FACTOR, driftMs } from '../../lib/backends/drift.js';
import { startWorker, type WorkerProcess } from '../support/worker-processes.js';
import { snapshotDist } from './dist-snapshot.js';
import { LatencyProxy } from './latency-proxy.js';

// A holder cut off from its store is told it lost the lock (its signal aborts) at least the drift
// allowance (lease x driftFactor + 2 ms) before another client can take it: measured from the
// signal's abort event as it fires in the holder's process (its timer's lateness included) to the
// other client's acquire resolving, with the store across a proxy that adds 5 or 20 ms each way
// (the network between an app and its store), for every way the lease was set or last renewed.

/** A lease store under test, its servers running. */
export interface LostSignalStore {
  /** One port per server (Redlock: every master). */
  readonly ports: readonly number[];
  /** The backend config that reaches the servers at `addresses` (host:port, in the order of `ports`). */
  config(addresses: readonly string[]): BackendConfig;
  stop(): Promise<void>;
}

/** How the holder took the lock, or last set its lease, before it was cut off. */
type HolderPath = 'acquire' | 'retried attempt' | 'renewal' | 'extend' | 're-entrant' | 'shortening extend';

const LEASE_MS = 1_500;
const ALLOWANCE_MS = driftMs(LEASE_MS, DEFAULT_DRIFT_FACTOR);
const CASES: readonly [number, HolderPath][] = [
  [5, 'acquire'],
  [5, 'retried attempt'],
  [5, 'renewal'],
  [5, 'extend'],
  [5, 're-entrant'],
  [5, 'shortening extend'],
  [20, 'acquire'],
  [20, 'renewal'],
  [20, 'shortening extend'],
];
const HOLDER = fileURLToPath(new URL('./lost-signal-holder.mjs', import.meta.url));
const now = () => Number(process.hrtime.bigint()) / 1e6;

export function describeLostSignal(name: string, start: () => Promise<LostSignalStore>): void {
  describe(`${name}: a holder cut off is told it lost the lock at least the drift allowance (${ALLOWANCE_MS} ms) before another client gets it`, () => {
    let store: LostSignalStore;
    let dist: Awaited<ReturnType<typeof snapshotDist>>;
    const margins: string[] = [];

    beforeAll(async () => {
      [store, dist] = await Promise.all([start(), snapshotDist()]);
    }, 120_000);

    afterAll(async () => {
      process.stdout.write(`lost-signal margins on ${name} (allowance ${ALLOWANCE_MS} ms): ${margins.join('; ')}\n`);
      await store?.stop();
      dist?.remove();
    }, 30_000);

    it.each(CASES)(
      '%i ms each way; the lease last set by: %s',
      async (delayMs, path) => {
        const [holderProxies, otherProxies] = await Promise.all(
          [0, 1].map(() => Promise.all(store.ports.map((port) => LatencyProxy.start(port, delayMs)))),
        );
        const proxies = [...holderProxies, ...otherProxies];
        const address = (each: readonly LatencyProxy[]) => each.map((proxy) => proxy.address);
        const other = new LockEngine(await createLockBackend(store.config(address(otherProxies))), {
          leaseMs: LEASE_MS,
        });
        const key = `lost-signal:${randomUUID().slice(0, 8)}`;
        // The other client's connections are up before the clock starts, as a running app's are; and before the holder
        // starts, so that its 'ready' comes straight after it set its lease: a renewal due meanwhile (a third of the lease
        // later) would be in flight at 'go', and the shortening extend would wait behind it (its answer is held).
        let holder: WorkerProcess<{ lostAt: number; reason: string; waitedMs?: number }> | undefined;
        try {
          await other.acquire(`${key}:warm`).then((lock) => lock.release());
          holder = startWorker(HOLDER, {
            dist: dist.url,
            backend: store.config(address(holderProxies)),
            key,
            leaseMs: LEASE_MS,
            path,
          });
          expect((await holder.nextLine()).event).toBe('ready');
          if (path === 'shortening extend') {
            // The extend (to LEASE_MS from 4 x LEASE_MS) reaches the store, its answer never comes back, and nothing after it gets through.
            for (const proxy of holderProxies) proxy.holdReplies();
            const delivered = Promise.all(holderProxies.map((proxy) => proxy.nextDelivery()));
            holder.child.stdin!.end('go\n');
            await delivered;
            for (const proxy of holderProxies) proxy.partition();
          } else {
            for (const proxy of holderProxies) proxy.partition();
            holder.child.stdin!.end('go\n');
          }
          const cutAt = now();
          const taken = other.acquire(key, { waitMs: 10 * LEASE_MS }).then((lock): [number, Lock] => [now(), lock]);
          const { lostAt, reason, waitedMs } = await holder.nextLine();
          const [takenAt, lock] = await taken;
          await lock.release();
          const marginMs = takenAt - lostAt!;
          margins.push(`${delayMs} ms, ${path}: ${marginMs.toFixed(1)}`);
          expect(reason).toBe('LockLostError');
          if (path === 'retried attempt') expect(waitedMs).toBeGreaterThanOrEqual(200);
          // The shortened lease reached the store: the key was free long before the holder's first lease (4 x LEASE_MS) would have ended.
          if (path === 'shortening extend') expect(takenAt - cutAt).toBeLessThan(2 * LEASE_MS);
          expect(marginMs).toBeGreaterThanOrEqual(ALLOWANCE_MS);
        } finally {
          holder?.child.kill('SIGKILL');
          await other.close();
          await Promise.all(proxies.map((proxy) => proxy.close()));
        }
      },
      30_000,
    );
  });
}
