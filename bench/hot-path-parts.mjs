// Client CPU of the pieces an acquire+release runs besides the Redis round trips, each alone in a
// tight loop of this process (ns per call, medians of alternating rounds): the owner id (instance,
// label, unique id, claim time), the hold-time record at release (RecentHolds, fresh keys), the renewal
// timer (WakeScheduler schedule + cancel), the fence upkeep note, the events check. A piece's cost
// on the real path can differ (caches, GC), so the paired builds (bench/ab.mjs) stay the measure of a change.
//   npm run build && node bench/hot-path-parts.mjs [--calls 200000] [--rounds 7]
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { packageUrl } from './lib/package-under-test.mjs';
import { median } from './lib/stats.mjs';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '7' } },
});
const calls = Number(values.calls);
const internal = (path) => import(new URL(path, packageUrl).href);
const { holderOwnerId, ownerIdPrefix } = await internal('./engine/holder-identity.js');
const { RecentHolds } = await internal('./engine/recent-holds.js');
const { WakeScheduler } = await internal('./engine/wake-scheduler.js');
const { FenceUpkeep } = await internal('./backends/redis/fence-upkeep.js');
const { LockEventHub } = await internal('./engine/lock-event-hub.js');
const { monotonicNow } = await internal('./util/clock.js');

const prefix = ownerIdPrefix('bench-host:1234');
const holds = new RecentHolds();
const scheduler = new WakeScheduler();
const hub = new LockEventHub();
// As LockService does: a listener of the warnings only.
hub.listen(['lost', 'release-failed', 'self-wait', 'force-released'], () => undefined);
let sink;
let seq = 0;

const pieces = [
  ['a uuid, for comparison (owner ids carried one before)', () => (sink = randomUUID())],
  ['owner id: instance, unique id, claim time (holderOwnerId)', () => (sink = holderOwnerId(prefix, undefined))],
  ['  of which the claim time (Date.now())', () => (sink = Date.now())],
  ['owner id with a label', () => (sink = holderOwnerId(prefix, 'orders.buy'))],
  ['hold-time record at release, fresh key (RecentHolds.record)', () => holds.record(`lock:bench:${seq++}`, 3)],
  [
    'renewal wake-up: schedule + cancel (WakeScheduler)',
    () => {
      const target = { wake() {} };
      scheduler.schedule(target, monotonicNow() + 3_333, 333);
      scheduler.cancel(target);
    },
  ],
  ['fence upkeep note (new FenceUpkeep)', () => (sink = new FenceUpkeep(86_400_000, monotonicNow(), 10_000, 0))],
  ['events check, only the warnings listened to (LockEventHub.wants)', () => (sink = hub.wants('acquired'))],
  ['monotonic clock read (performance.now)', () => (sink = monotonicNow())],
];

const results = pieces.map(() => []);
for (let round = 0; round < Number(values.rounds); round++) {
  const order = pieces.map((_, index) => index);
  if (round % 2) order.reverse();
  for (const index of order) {
    const run = pieces[index][1];
    for (let i = 0; i < 1000; i++) run();
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) run();
    results[index].push(Number(process.hrtime.bigint() - started) / calls);
  }
}
scheduler.close();
console.log(`ns per call, medians of ${values.rounds} alternating rounds of ${calls} calls (node ${process.version})`);
console.log('| piece | ns per call |\n|---|--:|');
pieces.forEach(([label], index) => console.log(`| ${label} | ${median(results[index]).toFixed(0)} |`));
void sink;
