import { RedisMasters } from '../harness/redis-masters.js';
import { describeLeaderSuite } from './leader-suite.js';

// One redis-server with AOF fsynced on every write: a restart keeps the leadership lock and its fence counter.
let redis: RedisMasters;

describeLeaderSuite({
  name: 'redis',
  async start() {
    redis = await RedisMasters.start(1, 'aof');
    return {
      name: 'redis',
      backend: () => ({ type: 'redis', url: redis.urls[0] }),
      leaseMs: 2_000,
      lossMs: 2_600,
      restartStore: () => redis.restart(0),
      freezeStore: () => redis.servers[0].pause(),
      thawStore: () => redis.servers[0].resume(),
    };
  },
  stop: async () => redis?.stop(),
});
