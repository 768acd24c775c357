import { describeNemesis } from './nemesis-suite.js';

// Redis Cluster, 3 masters with a replica each: the lock key's master cut off from its peers and
// its clients (its replica is promoted), and a holder partitioned.
describeNemesis('redis-cluster', ['isolate leader', 'partition']);
