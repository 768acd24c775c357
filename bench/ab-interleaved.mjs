// Two builds of this library in one process, interleaved finely: batches of `--batch` acquire+release
// pairs on fresh keys (`--callers` concurrent loops), A then B then B then A..., each build with its
// own engine and connection to one local redis-server. Prints the median of the per-pair ratios
// (B's ops/s ÷ A's, pairs of adjacent batches): on a busy machine a burst of other work hits both
// sides of a pair, where whole runs of seconds (bench/ab.mjs) each catch different bursts.
// `--a raw` is raw ioredis instead of a build (SET NX PX, compare-and-delete script: the floor of bench/run.mjs); any other
// name of bench/lib/contenders.mjs (`redlock`...) runs that contender.
//   npm run build && node bench/ab-interleaved.mjs --a node_modules/.ab-before/esm/index.js --b dist/esm/index.js [--callers 1] [--pairs 400] [--batch 200]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startRedis } from './lib/redis-server.mjs';
import { median } from './lib/stats.mjs';
import { CONTENDERS } from './lib/contenders.mjs';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: 'dist/esm/index.js' },
    callers: { type: 'string', default: '1' },
    pairs: { type: 'string', default: '400' },
    batch: { type: 'string', default: '200' },
  },
});
if (!values.a) throw new Error('--a <esm index.js of the build to compare against> is required');
const callers = Number(values.callers);
const batch = Number(values.batch);

/** A build's engine, behind the contenders' interface: acquire(key) → release(). */
async function openBuild(path) {
  const { LockEngine, createLockBackend } = await import(pathToFileURL(resolve(path)).href);
  const engine = new LockEngine(await createLockBackend({ type: 'redis', url: redis.url }), { leaseMs: 10_000 });
  return {
    async acquire(key) {
      const lock = await engine.acquire(key);
      return () => lock.release();
    },
    close: () => engine.close(),
  };
}

const redis = await startRedis();
try {
  const open = async (path, name) => {
    const engine = path.endsWith('.js') ? await openBuild(path) : await CONTENDERS[path].open({ url: redis.url });
    let seq = 0;
    /** Runs `batch` acquire+release pairs over `callers` loops; resolves the time it took (ms). */
    const run = async () => {
      const started = performance.now();
      let left = batch;
      await Promise.all(
        Array.from({ length: callers }, async () => {
          while (left-- > 0) await (await engine.acquire(`bench:il:${name}:${seq++}`))();
        }),
      );
      return performance.now() - started;
    };
    return { engine, run };
  };
  const a = await open(values.a, 'a');
  const b = await open(values.b, 'b');
  for (let i = 0; i < 20; i++) await Promise.all([a.run(), b.run()]);
  const ratios = [];
  const times = { a: [], b: [] };
  for (let pair = 0; pair < Number(values.pairs); pair++) {
    const [first, second] = pair % 2 ? [b, a] : [a, b];
    const t1 = await first.run();
    const t2 = await second.run();
    const [ta, tb] = pair % 2 ? [t2, t1] : [t1, t2];
    times.a.push(ta);
    times.b.push(tb);
    ratios.push(ta / tb);
  }
  const opsPerSec = (ms) => (batch / ms) * 1000;
  console.log(
    `acquire+release on fresh keys, ${callers} caller(s), ${values.pairs} interleaved pairs of ${batch}-operation batches, one process`,
  );
  console.log(`A ${values.a}: ${opsPerSec(median(times.a)).toFixed(0)} ops/s (median batch)`);
  console.log(`B ${values.b}: ${opsPerSec(median(times.b)).toFixed(0)} ops/s (median batch)`);
  const sorted = [...ratios].sort((x, y) => x - y);
  console.log(
    `B ÷ A: ${median(ratios).toFixed(3)}x (median of ${ratios.length} paired batches; quartiles ${sorted[Math.floor(sorted.length / 4)].toFixed(2)}-${sorted[Math.floor((3 * sorted.length) / 4)].toFixed(2)})`,
  );
  await Promise.all([a.engine.close(), b.engine.close()]);
} finally {
  redis.stop();
}
