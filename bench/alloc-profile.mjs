// Where an acquire+release allocates on the JS heap: the workload-1 loop (fresh keys, one caller)
// of a contender under V8's sampling heap profiler; bytes per operation by function (self), top N.
//   npm run build && node bench/alloc-profile.mjs [--contender ours] [--ops 20000] [--top 30]
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { startRedis } from './lib/redis-server.mjs';
import { CONTENDERS } from './lib/contenders.mjs';

const { values } = parseArgs({
  options: {
    contender: { type: 'string', default: 'ours' },
    ops: { type: 'string', default: '20000' },
    top: { type: 'string', default: '30' },
  },
});
const ops = Number(values.ops);
const redis = await startRedis();
try {
  const lock = await CONTENDERS[values.contender].open({ url: redis.url });
  let seq = 0;
  const loop = async (n) => {
    for (let i = 0; i < n; i++) await (await lock.acquire(`alloc:${seq++}`))();
  };
  await loop(5_000);
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await loop(ops);
  const { profile } = await session.post('HeapProfiler.stopSampling');
  const bySite = new Map();
  let total = 0;
  const walk = (node, stack) => {
    const frame = node.callFrame;
    const site = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${frame.lineNumber + 1}`;
    const self = node.selfSize;
    if (self > 0) {
      bySite.set(site, (bySite.get(site) ?? 0) + self);
      total += self;
    }
    for (const child of node.children) walk(child, stack);
  };
  walk(profile.head, []);
  console.log(`${values.contender}: ${(total / ops / 1024).toFixed(1)} KB sampled per acquire+release`);
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
    console.log(`${(bytes / ops).toFixed(0).padStart(7)} B  ${site}`);
  await lock.close();
  session.disconnect();
} finally {
  await redis.stop();
}
