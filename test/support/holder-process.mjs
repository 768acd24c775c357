// A separate OS process that takes a lock and holds it until it is killed.
// argv[2]: JSON { backend, key, keyPrefix, leaseMs }. Prints one JSON line once the lock is held.
import { LockEngine, createLockBackend } from '../../dist/esm/index.js';

const { backend, key, keyPrefix, leaseMs } = JSON.parse(process.argv[2]);
const engine = new LockEngine(await createLockBackend(backend), { keyPrefix, leaseMs });
const lock = await engine.acquire(key, { waitMs: 30_000 });
lock.signal.addEventListener('abort', () =>
  process.stdout.write(JSON.stringify({ event: 'lost', reason: String(lock.signal.reason) }) + '\n'),
);
process.stdout.write(JSON.stringify({ event: 'acquired', fence: lock.fence, pid: process.pid }) + '\n');
setInterval(() => undefined, 60_000);
