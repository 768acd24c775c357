import { describeNemesis } from './nemesis-suite.js';

// Redis Cluster, 3 masters with a replica each: a holder partitioned, a holder cut off from the
// lock key's shard only, and the lock key's master cut off from its peers and its clients (its
// replica is promoted). npm run test:nemesis also cuts that master off from its peers only while a
// client holds the lock there, and kills it right after a grant: asynchronous replication, as on
// Sentinel, so those rows are not failed on overlaps (the checker reports them).
const ASYNC = 'asynchronous replication: a failover can lose a lock (documented)';
describeNemesis(
  'redis-cluster',
  ['partition', 'partition shard', 'isolate leader', 'isolate leader from peers', 'failover'],
  {
    longOnly: ['isolate leader from peers', 'failover'],
    overlapsExpected: { 'isolate leader from peers': ASYNC, failover: ASYNC },
  },
);
