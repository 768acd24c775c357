import { CHILD_LEASE_TTL_SECONDS, EtcdFixture } from '../etcd/etcd-target.js';
import { describeTickSuite } from './tick-suite.js';

const etcd = new EtcdFixture();

describeTickSuite({
  name: 'etcd',
  start: () => etcd.start(),
  stop: () => etcd.stop(),
  processConfig: () => etcd.options(CHILD_LEASE_TTL_SECONDS),
  minHold: true,
  // The held remainder is a lease of whole seconds, at least etcd's minimum TTL (2 s with default
  // timings), freed by etcd's expiry sweep (every 500 ms): a 900 ms hold lasts 2-2.5 s.
  periodMs: 3_000,
  // The lease TTL, plus etcd's expiry sweep.
  crashFreeMs: CHILD_LEASE_TTL_SECONDS * 1_000 + 1_000,
});
