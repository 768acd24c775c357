import { describeNemesis } from './nemesis-suite.js';

// Redis Sentinel with the backend's `replicas: { min: 1, timeoutMs: 200 }`: a lock or a renewal
// counts once a replica acknowledged it, so the master cut off from its replicas grants nothing
// and its holder's lease lapses before the promoted replica's copy of the lock expires, and a
// master killed right after a grant leaves the lock on a replica. No row may grant a lock twice.
// `failover` runs in npm test; the others in npm run test:nemesis.
describeNemesis('redis-sentinel-acked', ['failover', 'isolate leader from peers', 'partition', 'isolate leader'], {
  longOnly: ['partition', 'isolate leader'],
});
