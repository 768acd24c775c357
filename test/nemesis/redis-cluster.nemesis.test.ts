import { describeNemesis, NEMESIS_LONG } from './nemesis-suite.js';

// Redis Cluster, 3 masters with a replica each: the lock key's master cut off from its peers and
// its clients (its replica is promoted), and a holder partitioned. npm run test:nemesis also cuts
// that master off from its peers only while a client holds the lock there: asynchronous
// replication, as on Sentinel, so the row is not failed on overlaps (the checker reports them).
describeNemesis('redis-cluster', ['isolate leader', 'partition', ...(NEMESIS_LONG ? ['isolate leader from peers' as const] : [])], {
  'isolate leader from peers': 'asynchronous replication: a failover can lose a lock (documented)',
});
// The same with the backend's `replicas: { min: 1, timeoutMs: 200 }` (npm run test:nemesis only).
if (NEMESIS_LONG) describeNemesis('redis-cluster-acked', ['isolate leader from peers']);
