// One OS process of the failover harness: `workers` concurrent loops, each taking the lock of one
// of `keys` (at random) through an ioredis Sentinel or Cluster client, then doing one non-atomic
// read-modify-write of that key's counter, kept by the parent over IPC, while holding for a while.
// A holder checks its lock's signal before writing (what a careful caller does) and leaves as soon
// as the engine says the lock is lost; the parent counts what still went wrong. With `guarded`, every
// holder also appends its fence to the key's log in a separate Redis through RedisFenceGuard.eval,
// lost or not (a holder that does not check): the log is the order in which the guard let writes in.
// argv[2]: JSON { topology: 'sentinel' | 'cluster', sentinels?, masterName?, startupNodes?, replicas?,
// keys, keyPrefix, leaseMs, workers, holdMs: [min, max], guarded?: { url, prefix } }. Messages: parent -> 'go', 'stop'.
import { setTimeout as delay } from 'node:timers/promises';
import { Cluster, Redis } from 'ioredis';
import { config, createEngine, ipcChannel, load } from '../support/worker-bootstrap.mjs';

// Settings like those of the clients the backend creates: a dead master fails a call within seconds.
const commandTimeout = 5_000 + (config.replicas?.timeoutMs ?? 0);
const client =
  config.topology === 'sentinel'
    ? new Redis({
        sentinels: config.sentinels,
        name: config.masterName,
        commandTimeout,
        maxRetriesPerRequest: 2,
        connectTimeout: 2_000,
        enableAutoPipelining: false,
      })
    : new Cluster(config.startupNodes, {
        redisOptions: { commandTimeout, connectTimeout: 2_000 },
        maxRedirections: 16,
        retryDelayOnFailover: 200,
        retryDelayOnClusterDown: 200,
        slotsRefreshTimeout: 2_000,
      });
client.on('error', () => undefined);
const engine = await createEngine(
  { type: 'redis', client, ...(config.replicas ? { replicas: config.replicas } : {}) },
  { keyPrefix: config.keyPrefix, leaseMs: config.leaseMs },
);
const stats = {
  acquired: 0,
  written: 0,
  lost: 0,
  skipped: 0,
  timeouts: 0,
  errors: {},
  guarded: { accepted: 0, refused: 0, failed: 0 },
};
const guarded = config.guarded ? await guardedLog(config.guarded) : undefined;

/** The key's log in the guarded Redis: `append(key, fence)` resolves 'accepted', 'refused' (StaleFenceError) or 'failed'. */
async function guardedLog({ url, prefix }) {
  const { RedisFenceGuard } = await load('fencing/redis-fence-guard.js');
  const resource = new Redis(url, { maxRetriesPerRequest: 1 });
  resource.on('error', () => undefined);
  const guard = new RedisFenceGuard(resource);
  return {
    async append(key, fence) {
      try {
        await guard.eval("return redis.call('RPUSH', KEYS[1], ARGV[1])", [`${prefix}${key}`], [String(fence)], fence);
        return 'accepted';
      } catch (error) {
        return error.name === 'StaleFenceError' ? 'refused' : 'failed';
      }
    },
    close: () => resource.quit().catch(() => resource.disconnect()),
  };
}
const { rpc, started, stopping, ready, done } = ipcChannel();
const tell = (op, args) => process.send({ op, ...args });

// Renewals move a holder's deadline: the parent judges a second holder against the latest one.
engine.events.subscribe((event) => {
  if (event.type === 'extended') tell('extended', { key: event.key, fence: event.fence, expiresAt: event.expiresAt });
});

async function holdOnce(key, lock) {
  const { section } = await rpc('begin', { key, fence: lock.fence, expiresAt: lock.expiresAt });
  const lost = new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
  const { value } = await rpc('read', { section });
  const [min, max] = config.holdMs;
  await Promise.race([delay(min + Math.random() * (max - min)), lost]);
  if (guarded) stats.guarded[await guarded.append(key, lock.fence)]++;
  if (lock.signal.aborted) {
    stats.lost++;
    stats.skipped++;
  } else {
    await rpc('write', { section, value: value + 1 });
    stats.written++;
  }
  tell('end', { section });
}

async function loop() {
  while (!stopping.signal.aborted) {
    const key = config.keys[Math.floor(Math.random() * config.keys.length)];
    let lock;
    try {
      lock = await engine.acquire(key, { waitMs: 5_000, signal: stopping.signal });
    } catch (error) {
      if (stopping.signal.aborted) break;
      if (error.name === 'LockTimeoutError') stats.timeouts++;
      else {
        const what = `${error.name}: ${String(error.message).replace(/\d+/g, 'N').slice(0, 90)}`;
        stats.errors[what] = (stats.errors[what] ?? 0) + 1;
      }
      await delay(100);
      continue;
    }
    stats.acquired++;
    try {
      await holdOnce(key, lock);
    } finally {
      await lock.release().catch(() => undefined);
    }
  }
}

ready();
await started;
await Promise.all(Array.from({ length: config.workers }, loop));
await engine.close();
await client.quit().catch(() => client.disconnect());
await guarded?.close();
done({ stats });
