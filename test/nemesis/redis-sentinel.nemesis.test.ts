import { describeNemesis, NEMESIS_LONG } from './nemesis-suite.js';

// Redis Sentinel (1 master, 2 replicas, 3 Sentinels) with asynchronous replication. The master
// cut off from its replicas and Sentinels while a client holds the lock there, its clients still
// reaching it, keeps renewing that lock and granting others that no replica gets; the Sentinels
// promote a replica that lacks them, and the clients that follow it take a lock the old master's
// holder still holds. The library documents this (docs/backends/redis.md, Replicas and failover):
// the row reports the overlaps the checker finds and is not failed on them; the same row with
// `replicas` (redis-sentinel-acked.nemesis.test.ts) is. `isolate leader` (from peers and
// clients: a failover) runs in npm run test:nemesis.
describeNemesis('redis-sentinel', ['isolate leader from peers', 'partition', ...(NEMESIS_LONG ? ['isolate leader' as const] : [])], {
  'isolate leader from peers': 'asynchronous replication: a failover can lose a lock (documented)',
});
