// Holder A of the Kleppmann scenario: a separate OS process using the built package. It takes the
// lock, writes once to each resource through the resource's fence guard (accepted: it holds the
// lock), reports 'holding' (the parent may now SIGSTOP it past its lease, or force-release the
// lock), and on the parent's 'write' (read from the pipe once it runs again) writes to each resource
// again with the fence it got: the writes of a holder that does not know that it lost its lock. It
// never checks its lease or its signal: only the resources can stop it.
// argv[2]: JSON { backend, key, keyPrefix, leaseMs, resources: [{ kind, url, name }], dist }.
// Messages: parent -> { cmd: 'write', value }; child -> { event: 'holding', fence, first } and
// { event: 'written', outcomes }, where `first` and `outcomes` hold one outcome per resource.
import { openGuardedResource } from './guarded-resource-client.mjs';

const { backend, key, keyPrefix, leaseMs, resources, dist } = JSON.parse(process.argv[2]);
// Only the engine, the backends and the guards are loaded (not the Nest layer), as in the fault
// workers: a holder starts in a fraction of the time.
const load = (path) => import(new URL(path, dist).href);
const [{ LockEngine }, { createLockBackend }, { SqlFenceGuard }, { RedisFenceGuard }] = await Promise.all(
  [
    'engine/lock-engine.js',
    'backends/create-backend.js',
    'fencing/sql-fence-guard.js',
    'fencing/redis-fence-guard.js',
  ].map(load),
);
const lib = { SqlFenceGuard, RedisFenceGuard };
// Connected before the lock is taken, so that the late writes need no new connection.
const targets = await Promise.all(resources.map((resource) => openGuardedResource(resource, lib)));
const engine = new LockEngine(await createLockBackend(backend), { keyPrefix, leaseMs });

/** The outcome of one guarded write: a refusal carries the StaleFenceError's fields. */
async function write(target, name, value, fence) {
  try {
    await target.write(name, value, fence);
    return { event: 'wrote' };
  } catch (error) {
    if (error.name === 'StaleFenceError')
      return {
        event: 'refused',
        error: { name: error.name, resource: error.resource, fence: error.fence, highest: error.highest },
      };
    return { event: 'failed', error: { name: error.name, message: String(error.message) } };
  }
}

/** One write per resource, one after the other (as one holder's steps). */
async function writeAll(value, fence) {
  const outcomes = [];
  for (const [i, target] of targets.entries()) outcomes.push(await write(target, resources[i].name, value, fence));
  return outcomes;
}

const lock = await engine.acquire(key, { waitMs: 10_000 });
const fence = lock.fence;
const first = await writeAll('A: first write, while holding', fence);
process.on('message', async (message) => {
  if (message.cmd === 'write') process.send({ event: 'written', outcomes: await writeAll(message.value, fence) });
});
process.send({ event: 'holding', fence, first });
