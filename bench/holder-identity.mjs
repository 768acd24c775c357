// Side by side: the plain acquire path before and after holder identity (issue 18), in fresh
// processes, interleaved rounds. Each side is a build of the package (dist/esm/index.js).
//   node bench/holder-identity.mjs --before /path/to/before/index.js --after /path/to/after/index.js [--rounds 9]
// Prints, per store (uncontended acquire+release, one caller, fresh keys), the median client CPU µs
// per operation and wall-clock ops/s of each side, the ratios after/before, and the same with a
// per-call label on the after side.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startRedis } from './lib/redis-server.mjs';

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    after: { type: 'string' },
    rounds: { type: 'string', default: '9' },
    child: { type: 'string' },
  },
});

if (values.child) {
  // One measurement in this fresh process: JSON { opsPerSec } on stdout.
  const { dist, store, url, label, ops } = JSON.parse(values.child);
  const { LockEngine, createLockBackend } = await import(dist);
  const backend =
    store === 'memory' ? await createLockBackend({ type: 'memory' }) : await createLockBackend({ type: 'redis', url });
  const engine = new LockEngine(backend, { keyPrefix: `bench:${process.pid}:` });
  const options = label ? { label: 'order 42 for ACME' } : undefined;
  const run = async (count) => {
    for (let i = 0; i < count; i++) await (await engine.acquire(`k${i}`, options)).release();
  };
  await run(Math.ceil(ops / 10)); // warm-up
  const startedAt = performance.now();
  const cpuBefore = process.cpuUsage();
  await run(ops);
  const cpu = process.cpuUsage(cpuBefore);
  const seconds = (performance.now() - startedAt) / 1000;
  await engine.close();
  // CPU time of this process per operation: far less disturbed by other load on a shared machine than wall time.
  process.stdout.write(JSON.stringify({ opsPerSec: ops / seconds, cpuUsPerOp: (cpu.user + cpu.system) / ops }));
  process.exit(0);
}

const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)];
const redis = await startRedis();
try {
  const sides = [
    { name: 'before', dist: values.before, label: false },
    { name: 'after', dist: values.after, label: false },
    { name: 'after+label', dist: values.after, label: true },
  ];
  for (const [store, ops] of [
    ['memory', 200_000],
    ['redis', 10_000],
  ]) {
    const results = Object.fromEntries(sides.map((side) => [side.name, []]));
    for (let round = 0; round < Number(values.rounds); round++) {
      for (let i = 0; i < sides.length; i++) {
        const side = sides[(i + round) % sides.length];
        const child = spawnSync(
          process.execPath,
          [
            fileURLToPath(import.meta.url),
            '--child',
            JSON.stringify({ dist: side.dist, store, url: redis.url, label: side.label, ops }),
          ],
          { encoding: 'utf8' },
        );
        if (child.status !== 0) throw new Error(child.stderr);
        results[side.name].push(JSON.parse(child.stdout));
      }
    }
    const cpuOf = (name) => median(results[name].map((r) => r.cpuUsPerOp));
    const opsOf = (name) => median(results[name].map((r) => r.opsPerSec));
    for (const side of sides) {
      console.log(
        `${store.padEnd(7)} ${side.name.padEnd(12)} CPU ${cpuOf(side.name).toFixed(2).padStart(6)} µs/op (x${(cpuOf(side.name) / cpuOf('before')).toFixed(3)})` +
          `   wall ${opsOf(side.name).toFixed(0).padStart(7)} ops/s (x${(opsOf(side.name) / opsOf('before')).toFixed(3)})`,
      );
    }
  }
} finally {
  redis.stop();
}
