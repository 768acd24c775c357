import { describeNemesis, NEMESIS_LONG } from './nemesis-suite.js';

// Redis Sentinel with the backend's `replicas: { min: 1, timeoutMs: 200 }`: a lock or a renewal
// counts once a replica acknowledged it, so the master cut off from its replicas grants nothing
// and its holder's lease lapses before the promoted replica's copy of the lock expires.
// `isolate leader` runs in npm run test:nemesis.
describeNemesis('redis-sentinel-acked', ['isolate leader from peers', ...(NEMESIS_LONG ? ['isolate leader' as const] : [])]);
