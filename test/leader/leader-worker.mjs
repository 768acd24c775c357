// One app instance of the leader-election process tests: a LockEngine and a LeaderService (the
// built package, no Nest app) campaigning for one leadership. While it leads, its task writes to
// a term-checked resource kept by the parent (over IPC): a "checkpoint" (where the parent may
// pause it), then the write, sent even if the signal aborted meanwhile (a write already under way).
// It reports when it starts and stops believing it leads, on the machine's monotonic clock
// (process.hrtime, shared by every process), so the parent can check that beliefs never overlap.
// argv[2]: JSON { backend, name, instance, leaseMs, dist }. Parent -> 'resign', 'stop'.
import { setTimeout as delay } from 'node:timers/promises';

const { backend, name, instance, leaseMs, dist } = JSON.parse(process.argv[2]);
const root = dist ?? new URL('../../dist/esm/', import.meta.url).href;
const { LockEngine } = await import(new URL('engine/lock-engine.js', root).href);
const { createLockBackend } = await import(new URL('backends/create-backend.js', root).href);
const { LeaderService } = await import(new URL('leader/leader-service.js', root).href);
const engine = new LockEngine(await createLockBackend(backend), { instance, leaseMs, keyPrefix: 'leader-test:' });
const leaders = new LeaderService(engine);
const now = () => process.hrtime.bigint().toString();

let nextId = 0;
const pending = new Map();
const rpc = (op, args = {}) =>
  new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, resolve);
    process.send({ id, op, ...args });
  });

process.on('message', async (message) => {
  if (message.reply !== undefined) {
    pending.get(message.reply)?.(message);
    pending.delete(message.reply);
  } else if (message.cmd === 'resign') {
    await leaders.resign(name);
  } else if (message.cmd === 'stop') {
    // What Nest's shutdown hooks do: LeaderService first, then the engine.
    await leaders.close();
    await engine.close();
    process.send({ event: 'stopped', at: now() }, () => process.disconnect());
  }
});

leaders.lead(name, async ({ term, signal }) => {
  process.send({ event: 'leader', term, at: now() });
  signal.addEventListener(
    'abort',
    () => process.send({ event: 'follower', term, at: now(), reason: signal.reason?.name }),
    { once: true },
  );
  while (!signal.aborted) {
    await rpc('checkpoint', { term });
    await rpc('write', { term });
    await delay(10);
  }
});
process.send({ event: 'ready' });
