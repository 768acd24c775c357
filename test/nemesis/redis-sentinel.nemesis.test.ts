import { describeNemesis } from './nemesis-suite.js';

// Redis Sentinel (1 master, 2 replicas, 3 Sentinels) with asynchronous replication. The master
// cut off from its replicas and Sentinels while a client holds the lock there, its clients still
// reaching it, keeps renewing that lock and granting others that no replica gets; the Sentinels
// promote a replica that lacks them, and the clients that follow it take a lock the old master's
// holder still holds. A master killed right after a grant may take the lock with it the same way.
// The library documents this (docs/backends/redis.md, Replicas and failover): those rows report
// the overlaps the checker finds and are not failed on them; the same rows with `replicas`
// (redis-sentinel-acked.nemesis.test.ts) are. `isolate leader` (the master cut off from peers and
// clients) and `failover` (the master killed under the clients' load) run in npm run test:nemesis.
const ASYNC = 'asynchronous replication: a failover can lose a lock (documented)';
describeNemesis('redis-sentinel', ['partition', 'isolate leader from peers', 'isolate leader', 'failover'], {
  longOnly: ['isolate leader', 'failover'],
  overlapsExpected: { 'isolate leader from peers': ASYNC, failover: ASYNC },
});
