import type * as PromClient from 'prom-client';
import type { LockEvent } from '../engine/lock-events.js';
import { loadOptional } from '../util/load-optional.js';
import type { LockEventSource, MetricsSubscription } from './observable-like.js';

/** A prom-client `Registry` (typed loosely so the published types never reference an optional peer). */
export interface PrometheusRegistryLike {
  /** The metric registered under `name`, if any (reused rather than registered twice). */
  getSingleMetric(name: string): unknown;
}

/** Options of `subscribeLockMetrics`. */
export interface LockMetricsOptions {
  /** Prefix of every metric name. Default `'distributed_lock_'`. */
  prefix?: string;
  /** Histogram buckets in seconds for wait and hold times. */
  buckets?: number[];
  /** The prom-client module, when it cannot be imported by name (bundlers). Loaded lazily otherwise. */
  promClient?: unknown;
}

const DEFAULT_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * Feeds lock events to prom-client metrics in `registry`:
 * counters `<prefix>acquired_total{backend,mode,store}`, `<prefix>timeouts_total{backend,store}`,
 * `<prefix>lost_total{backend,store}`, `<prefix>extend_failures_total{backend,store}`,
 * `<prefix>acquire_failures_total{backend,reason,store}` (acquisitions that failed but not because
 * the key was busy: `reason="store-unavailable"` when the store did not answer, `"shutting-down"`
 * when this instance refused them while it shuts down: a deploy, not an outage),
 * `<prefix>skipped_total{backend,store}` (`onBusy: 'skip'` / `@LockedJob()` calls that did not run), and histograms
 * `<prefix>wait_seconds{backend,outcome=acquired|timeout,store}` and
 * `<prefix>hold_seconds{backend,outcome=released|lost,store}` (`store`: the module's `name`, `'default'`
 * for the unnamed one). Keys are not labels (unbounded cardinality).
 * Metrics already in the registry under these names are reused, so two modules can share them.
 * `prom-client` is an optional peer, imported on the first call.
 *
 * ```ts
 * const subscription = await subscribeLockMetrics(lockService.events, register);
 * ```
 */
export async function subscribeLockMetrics(
  events: LockEventSource<LockEvent>,
  registry: PrometheusRegistryLike,
  options: LockMetricsOptions = {},
): Promise<MetricsSubscription> {
  const client = (options.promClient ??
    (await loadOptional('prom-client', 'subscribeLockMetrics'))) as typeof PromClient;
  const prefix = options.prefix ?? 'distributed_lock_';
  const buckets = options.buckets ?? DEFAULT_BUCKETS;
  const registers = [registry as PromClient.Registry];
  const counter = (name: string, help: string, labelNames: string[]) =>
    (registry.getSingleMetric(prefix + name) as PromClient.Counter | undefined) ??
    new client.Counter({ name: prefix + name, help, labelNames, registers });
  const histogram = (name: string, help: string) =>
    (registry.getSingleMetric(prefix + name) as PromClient.Histogram | undefined) ??
    new client.Histogram({
      name: prefix + name,
      help,
      labelNames: ['backend', 'outcome', 'store'],
      buckets,
      registers,
    });

  const acquired = counter('acquired_total', 'Locks acquired', ['backend', 'mode', 'store']);
  const timeouts = counter('timeouts_total', 'Acquisitions that gave up because the lock stayed busy', [
    'backend',
    'store',
  ]);
  const lost = counter('lost_total', 'Locks lost while held (lease lapsed, renewal refused, store says gone)', [
    'backend',
    'store',
  ]);
  const extendFailures = counter(
    'extend_failures_total',
    'Lease renewals that failed because the store did not answer',
    ['backend', 'store'],
  );
  const releaseFailures = counter(
    'release_failures_total',
    'Releases the store did not answer (the key stays taken until its lease lapses)',
    ['backend', 'store'],
  );
  const acquireFailures = counter(
    'acquire_failures_total',
    'Acquisitions that failed other than by a busy key: store-unavailable (an outage) or shutting-down (this instance is closing)',
    ['backend', 'reason', 'store'],
  );
  const skipped = counter(
    'skipped_total',
    "Calls with onBusy 'skip' (scheduled jobs) that did not run because another holder had the key",
    ['backend', 'store'],
  );
  const wait = histogram('wait_seconds', 'Time spent waiting for a lock');
  const hold = histogram('hold_seconds', 'Time a lock was held');

  return events.subscribe((event) => {
    const { backend, store } = event;
    try {
      switch (event.type) {
        case 'acquired':
          acquired.inc({ backend, mode: event.mode, store });
          wait.observe({ backend, outcome: 'acquired', store }, event.waitedMs / 1000);
          break;
        case 'timeout':
          timeouts.inc({ backend, store });
          wait.observe({ backend, outcome: 'timeout', store }, event.waitedMs / 1000);
          break;
        case 'lost':
          lost.inc({ backend, store });
          hold.observe({ backend, outcome: 'lost', store }, event.heldMs / 1000);
          break;
        case 'extend-failed':
          extendFailures.inc({ backend, store });
          break;
        case 'release-failed':
          releaseFailures.inc({ backend, store });
          break;
        case 'acquire-failed':
          acquireFailures.inc({ backend, reason: event.reason, store });
          break;
        case 'skipped':
          skipped.inc({ backend, store });
          break;
        case 'released':
          hold.observe({ backend, outcome: 'released', store }, event.heldMs / 1000);
          break;
      }
    } catch {
      // A metrics problem (e.g. a clashing metric registered by someone else) must never reach the lock engine.
    }
  });
}
