// One client process of the nemesis harness, on the built package: one loop of acquire, read the
// two counters of the resource Redis, hold, write each +1 (the guarded one through
// RedisFenceGuard with the lock's fence, the canary one without any guard: it trusts the lock),
// release. Every invocation and completion goes to the parent as a history event. At two
// checkpoints (after the acquire reply, before the writes) the parent may inject a fault: stop this
// process, cut its proxy, have it hold longer or block its event loop.
// argv[2]: JSON { dist, backend, key, keyPrefix, leaseMs, waitMs, waitBoundMs, resourceUrl, resourcePrefix, holdMs: [min, max], seed, stamp, sql? }.
// stamp: whether this process's monotonic clock is the real one (not under libfaketime): then it
// times its events itself; otherwise the parent times them on receipt.
import { existsSync, rmSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { config, ipcChannel, load, root } from '../support/worker-bootstrap.mjs';

const [{ RedisFenceGuard }, { LockEngine }, { createLockBackend }] = await Promise.all([
  load('fencing/redis-fence-guard.js'),
  load('engine/lock-engine.js'),
  load('backends/create-backend.js'),
]);
const { topologyBackend } = await import('./redis-topology-client.mjs');
const topology = topologyBackend(config.backend);
const engine = new LockEngine(hearing(await createLockBackend(topology.backend)), {
  keyPrefix: config.keyPrefix,
  leaseMs: config.leaseMs,
});
const resource = new Redis(config.resourceUrl, { maxRetriesPerRequest: 1, enableAutoPipelining: false });
resource.on('error', () => undefined);
const guard = new RedisFenceGuard(resource);
// On the SQL stores the guarded counter is a row behind SqlFenceGuard (sql-counter.mjs); elsewhere a Redis key behind RedisFenceGuard.
const sql = config.sql
  ? await (await import('./sql-counter.mjs')).sqlCounter(config.sql, `${config.resourcePrefix}guarded`, root)
  : undefined;
const keys = {
  guarded: [`${config.resourcePrefix}guarded`, `${config.resourcePrefix}guarded:fence`],
  canary: [`${config.resourcePrefix}canary`, `${config.resourcePrefix}canary:fence`],
};
// Sets the counter and the writer's fence; returns what they were just before (the checker's lost updates and stale writes).
const WRITE =
  "local prior = redis.call('GET', KEYS[1]) or '0'; local priorFence = redis.call('GET', KEYS[2]) or '-1'; redis.call('SET', KEYS[1], ARGV[1]); redis.call('SET', KEYS[2], ARGV[2]); return {prior, priorFence}";

/** An answer after this long without one is recorded (not every renewal: the history stays small). */
const SILENCE_MS = 50;
const random = mulberry32(config.seed);
const now = () => (config.stamp ? Number(process.hrtime.bigint()) / 1e6 : undefined);
const emit = (event) => process.send({ event: 'history', entry: { ...event, time: now() } });

const { rpc, started, stopping, ready, done } = ipcChannel();
// The parent reads this process's clocks (a slow-clock client's rate: libfaketime fakes both).
process.on(
  'message',
  (message) =>
    message.cmd === 'clock' &&
    process.send({ event: 'clock', id: message.id, monotonic: performance.now(), wall: Date.now() }),
);

const describeError = (error) => `${error?.name}: ${String(error?.message).slice(0, 160)}`;

async function write(kind, read, fence) {
  emit({ type: 'invoke', f: 'write', resource: kind, read, fence });
  try {
    const args = [String(read + 1), String(fence ?? -1)];
    const [prior, priorFence] =
      kind === 'canary'
        ? await resource.eval(WRITE, 2, ...keys.canary, ...args)
        : sql
          ? await sql.write(read + 1, fence)
          : await guard.eval(WRITE, keys.guarded, args, fence);
    emit({ type: 'ok', f: 'write', resource: kind, read, fence, prior: Number(prior), priorFence: Number(priorFence) });
  } catch (error) {
    emit({
      type: error.name === 'StaleFenceError' ? 'fail' : 'info',
      f: 'write',
      resource: kind,
      read,
      fence,
      error: describeError(error),
    });
  }
}

/**
 * The backend, telling the history when the store answers this client after a silence (the first
 * answer after a heal: recovery): an attempt, renewal or release that resolved, whatever it said.
 */
function hearing(backend) {
  const claim = backend.claim.bind(backend);
  let lastAnswer = -Infinity;
  const heard = (promise) =>
    promise.then((value) => {
      const at = performance.now();
      if (at - lastAnswer >= SILENCE_MS) emit({ type: 'event', f: 'heard', silentMs: Math.round(at - lastAnswer) });
      lastAnswer = at;
      return value;
    });
  backend.claim = (request) => {
    const inner = claim(request);
    for (const name of ['tryAcquire', 'renew', 'release']) {
      const call = inner[name].bind(inner);
      inner[name] = (...args) => heard(call(...args));
    }
    return inner;
  };
  return backend;
}

/** Blocks this event loop until `file` exists (the runner saw a newer holder write), for `ms` at most. */
function busyLoop(ms, file) {
  const until = performance.now() + ms;
  while (performance.now() < until && !existsSync(file));
  rmSync(file, { force: true });
}

async function once() {
  emit({ type: 'invoke', f: 'acquire' });
  // Due when the wait's bound runs out: if it has run when the acquire fails, the answer came after the bound by more than
  // this event loop's own lateness (a loaded machine delays both alike).
  let pastBound = false;
  const bound = setTimeout(() => (pastBound = true), config.waitBoundMs);
  let lock;
  try {
    lock = await engine.acquire(config.key, { waitMs: config.waitMs, signal: stopping.signal });
  } catch (error) {
    clearTimeout(bound);
    // A timeout is a definite "not acquired"; anything else may have left a claim in the store (indeterminate).
    emit({
      type: error.name === 'LockTimeoutError' || stopping.signal.aborted ? 'fail' : 'info',
      f: 'acquire',
      error: describeError(error),
      pastBound,
    });
    if (!stopping.signal.aborted) await delay(20);
    return;
  }
  clearTimeout(bound);
  emit({ type: 'ok', f: 'acquire', fence: lock.fence });
  // lateMs: how long after the lease's local deadline the signal fired (a loaded event loop runs timers late).
  const lost = () =>
    emit({
      type: 'event',
      f: 'lost',
      fence: lock.fence,
      error: lock.signal.reason?.name,
      ...(lock.signal.reason?.name === 'LockLostError' && { lateMs: Date.now() - lock.expiresAt }),
    });
  if (lock.signal.aborted) lost();
  else lock.signal.addEventListener('abort', lost, { once: true });

  try {
    const afterAcquire = await rpc('checkpoint', { point: 'after-acquire' });
    const [guarded, canary] = (await resource.mget(keys.guarded[0], keys.canary[0])).map(Number);
    const guardedRead = sql ? await sql.read() : guarded;
    const [min, max] = config.holdMs;
    await delay(afterAcquire.holdMs ?? min + random() * (max - min));
    const beforeWrite = await rpc('checkpoint', { point: 'before-write' });
    if (beforeWrite.blockMs) {
      process.send({
        event: 'history',
        entry: { process: 'nemesis', type: 'event', f: 'pause', target: config.index, time: now() },
      });
      busyLoop(beforeWrite.blockMs, beforeWrite.resumeFile);
      process.send({
        event: 'history',
        entry: { process: 'nemesis', type: 'event', f: 'resume', target: config.index, time: now() },
      });
    }
    if (lock.fence !== undefined) await write('guarded', guardedRead, lock.fence);
    await write('canary', canary, lock.fence);
  } catch (error) {
    // The resource failed (a SQL store restarting under its guarded row): the holder gives up this round.
    emit({ type: 'event', f: 'resource-error', error: describeError(error) });
  }
  emit({ type: 'invoke', f: 'release', fence: lock.fence });
  try {
    await lock.release();
    emit({ type: 'ok', f: 'release', fence: lock.fence });
  } catch (error) {
    emit({
      type: error.name === 'LockLostError' ? 'fail' : 'info',
      f: 'release',
      fence: lock.fence,
      error: describeError(error),
    });
  }
}

ready();
await started;
while (!stopping.signal.aborted) await once();
await engine.close().catch(() => undefined);
topology.client?.disconnect();
resource.disconnect();
await sql?.close();
done();

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
