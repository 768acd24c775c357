// A separate OS process that waits for a lock as a fair claim (and holds it once it gets it).
// argv[2]: JSON { backend, key, keyPrefix, leaseMs, waitMs }. Prints one JSON line when it starts
// waiting ({ event: 'waiting' }) and one when it holds the lock ({ event: 'acquired', fence }).
import { LockEngine, createLockBackend } from '../../dist/esm/index.js';

const { backend, key, keyPrefix, leaseMs, waitMs } = JSON.parse(process.argv[2]);
const engine = new LockEngine(await createLockBackend(backend), { keyPrefix, leaseMs });
const acquiring = engine.acquire(key, { fair: true, waitMs });
process.stdout.write(JSON.stringify({ event: 'waiting', pid: process.pid }) + '\n');
const lock = await acquiring;
process.stdout.write(JSON.stringify({ event: 'acquired', fence: lock.fence }) + '\n');
setInterval(() => undefined, 60_000);
