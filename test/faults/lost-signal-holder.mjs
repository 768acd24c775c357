// A lock holder in a process of its own (its timers run on an event loop nothing else loads), for
// the lost-signal margins: takes the lock along one `path`, says `ready`, waits for the parent's
// `go` line (by then the parent has cut it off from the store, or holds the store's answers), then
// reports when its lock's signal aborts, on the machine-wide monotonic clock.
// argv[2]: JSON { dist, backend, key, leaseMs, path }.
import { once } from 'node:events';
import { config, createEngine, doneOnStdout, readyOnStdin } from '../support/worker-bootstrap.mjs';

const now = () => Number(process.hrtime.bigint()) / 1e6;
/** retried attempt: when the other holder releases the key. */
const RETRY_AFTER_MS = 200;
/** retried attempt: how long the acquisition waited (at least RETRY_AFTER_MS: its first attempt found the key busy). */
let waitedMs;
const engine = await createEngine(config.backend, { leaseMs: config.leaseMs });
const { key, path } = config;

/** Takes the lock as `path` says; resolves the lock whose signal tells the loss. */
async function take() {
  switch (path) {
    case 'acquire':
      return engine.acquire(key);
    case 'retried attempt': {
      // Another holder has the key when this one first asks, and releases it a moment later: the attempt that takes it is not the first.
      const other = await createEngine(config.backend, { leaseMs: config.leaseMs });
      const blocker = await other.acquire(key);
      const askedAt = performance.now();
      const taken = engine.acquire(key, { waitMs: 10_000 });
      setTimeout(() => void blocker.release().then(() => other.close()), RETRY_AFTER_MS);
      const lock = await taken;
      waitedMs = performance.now() - askedAt;
      return lock;
    }
    case 'shortening extend': {
      const lock = await engine.acquire(key, { leaseMs: config.leaseMs * 4 });
      // Once unchanged, so the driver has what the next renewal needs (mysql2 prepares a statement on first use: a round trip).
      await lock.extend(config.leaseMs * 4);
      return lock;
    }
    case 'renewal': {
      const lock = await engine.acquire(key);
      await new Promise((resolve) => {
        const subscription = engine.events.subscribe(
          (event) => event.type === 'extended' && (subscription.unsubscribe(), resolve()),
        );
      });
      return lock;
    }
    case 'extend': {
      const lock = await engine.acquire(key);
      await lock.extend();
      return lock;
    }
    case 're-entrant':
      return new Promise((resolve, reject) => {
        engine
          .withLock(key, async () => {
            const inner = await engine.acquire(key);
            resolve(inner);
            await once(inner.signal, 'abort');
          })
          .catch(() => undefined);
        setTimeout(() => reject(new Error('no re-entrant lock')), 10_000).unref();
      });
    default:
      throw new Error(`unknown path ${path}`);
  }
}

const lock = await take();
const lost = once(lock.signal, 'abort').then(now);
await readyOnStdin();
// Sent once the store's answers are held: the store shortens the lease, the answer never comes.
if (path === 'shortening extend') lock.extend(config.leaseMs).catch(() => undefined);
doneOnStdout({ lostAt: await lost, reason: lock.signal.reason?.name, waitedMs });
process.exit(0);
