import { describeNemesis } from './nemesis-suite.js';

// Redis Cluster with the backend's `replicas: { min: 1, timeoutMs: 200 }`: no row may grant a lock
// twice, the failovers included (npm run test:nemesis only).
const ROWS = ['isolate leader from peers', 'failover', 'partition', 'partition shard', 'isolate leader'] as const;
describeNemesis('redis-cluster-acked', ROWS, { longOnly: ROWS });
