// What the bench measures, per mode. Every workload runs `rounds` rounds; in each round every
// contender runs once in a fresh process, in an order rotated from round to round. `countKeys`: the
// report also shows the keys each run left in Redis (all of them, and those that never expire).

const REDIS_PEERS = ['ours', 'raw', 'semaphore', 'semaphore-fast', 'redlock', 'redlock-fast', 'ours-memory'];

export function plan({ quick }) {
  const seconds = quick ? 0.3 : 1.5;
  const warmupSeconds = quick ? 0 : 1;
  return [
    {
      id: 'uncontended',
      title: '1. uncontended acquire+release, one caller, fresh keys',
      kind: 'slot',
      contenders: REDIS_PEERS,
      spec: { workload: 'throughput', callers: 1, seconds, warmupSeconds },
      countKeys: true,
      metric: 'opsPerSec',
      unit: 'ops/s',
      higherIsBetter: true,
      rounds: quick ? 1 : 3,
    },
    {
      id: 'parallel64',
      title: '2. 64 concurrent callers, distinct fresh keys',
      kind: 'slot',
      contenders: REDIS_PEERS,
      spec: { workload: 'throughput', callers: 64, seconds, warmupSeconds },
      metric: 'opsPerSec',
      unit: 'ops/s',
      higherIsBetter: true,
      rounds: quick ? 1 : 3,
    },
    {
      id: 'contended1x32',
      title: '3a. 32 workers, ONE key, one process',
      kind: 'contended',
      processes: 1,
      workers: 32,
      contenders: REDIS_PEERS,
      seconds: quick ? 0.5 : 2,
      metric: 'acqPerSec',
      unit: 'acq/s',
      higherIsBetter: true,
      rounds: quick ? 1 : 3,
    },
    {
      id: 'contended4x8',
      title: '3b. 32 workers, ONE key, 4 processes x 8',
      kind: 'contended',
      processes: 4,
      workers: 8,
      contenders: REDIS_PEERS.filter((name) => name !== 'ours-memory'),
      seconds: quick ? 0.5 : 2,
      metric: 'acqPerSec',
      unit: 'acq/s',
      higherIsBetter: true,
      rounds: quick ? 1 : 3,
    },
    {
      id: 'contended4x8io',
      title: '3c. 32 workers, ONE key, 4 processes x 8, a Redis round trip (INCR) inside the lock',
      kind: 'contended',
      processes: 4,
      workers: 8,
      insideIncr: true,
      contenders: REDIS_PEERS.filter((name) => name !== 'ours-memory'),
      seconds: quick ? 0.5 : 2,
      metric: 'acqPerSec',
      unit: 'acq/s',
      higherIsBetter: true,
      rounds: quick ? 1 : 3,
    },
    {
      id: 'http',
      title:
        '4. HTTP endpoint, @Locked vs the same lock in a hand-written interceptor (32 keep-alive connections, fresh key per request)',
      kind: 'http',
      contenders: ['unguarded', 'handwritten-memory', 'locked-memory', 'handwritten-redis', 'locked-redis'],
      baseline: 'unguarded',
      pairs: [
        ['locked-memory', 'handwritten-memory'],
        ['locked-redis', 'handwritten-redis'],
      ],
      seconds: quick ? 0.5 : 2,
      metric: 'requestsPerSec',
      unit: 'req/s',
      higherIsBetter: true,
      rounds: quick ? 1 : 5,
    },
    {
      id: 'renewal',
      title: '5. locks held at once with renewal on (lease 3 s, renewed every 1 s)',
      kind: 'slot',
      contenders: ['ours', 'semaphore'],
      spec: { workload: 'renewal', locks: quick ? 500 : 10_000, leaseMs: 3000, windowSeconds: quick ? 1 : 3 },
      metric: 'redisCommandsPerSec',
      unit: 'redis cmd/s',
      higherIsBetter: false,
      rounds: 1,
    },
    {
      id: 'memory',
      title: '6. acquire/release cycles, then heap growth after GC and open handles',
      kind: 'slot',
      contenders: ['ours-memory', 'ours'],
      specFor: (name) => ({
        workload: 'memory',
        cycles: name === 'ours-memory' ? (quick ? 20_000 : 1_000_000) : quick ? 2_000 : 100_000,
      }),
      metric: 'heapGrowthMB',
      unit: 'MB',
      higherIsBetter: false,
      rounds: 1,
    },
  ];
}

export const HTTP_CONTENDERS = {
  unguarded: {
    label: 'unguarded endpoint',
    note: 'the same Nest endpoint without any lock (memory backend module loaded)',
    backend: { type: 'memory' },
    route: 'plain',
  },
  'handwritten-memory': {
    label: 'hand-written interceptor (memory)',
    note: 'engine.withLock(key, () => lastValueFrom(next.handle())) in an interceptor on the route, memory backend',
    backend: { type: 'memory' },
    route: 'handwritten',
  },
  'locked-memory': {
    label: '@Locked (memory)',
    note: "@Locked('item:{params.id}'), memory backend",
    backend: { type: 'memory' },
    route: 'locked',
  },
  'handwritten-redis': {
    label: 'hand-written interceptor (redis)',
    note: 'the same interceptor, redis backend',
    backend: { type: 'redis' },
    route: 'handwritten',
  },
  'locked-redis': {
    label: '@Locked (redis)',
    note: "@Locked('item:{params.id}'), redis backend",
    backend: { type: 'redis' },
    route: 'locked',
  },
};
