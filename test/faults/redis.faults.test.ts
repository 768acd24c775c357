import { RedisMasters } from '../harness/redis-masters.js';
import { describeFaultSuite } from './fault-suite.js';

// One redis-server with AOF fsynced on every write: a restart keeps the lock and its fence counter.
// (Without persistence a restart loses both: docs/operations.md, "Redis restarts without persistence".)
let redis: RedisMasters;

describeFaultSuite({
  name: 'redis',
  fenced: true,
  async start() {
    redis = await RedisMasters.start(1, 'aof');
    return {
      name: 'redis',
      workerConfig: () => ({ type: 'redis', url: redis.urls[0] }),
      leaseMs: 1_000,
      lossMs: 1_600,
      restartStore: () => redis.restart(0),
      freezeStore: () => redis.servers[0].pause(),
      thawStore: () => redis.servers[0].resume(),
    };
  },
  stop: async () => redis?.stop(),
});
