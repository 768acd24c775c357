import { describeNemesis } from './nemesis-suite.js';

// The leader, then the member the clients use, isolated from its peers and its clients; a holder partitioned; a holder paused before its write.
// `isolate member` runs in npm run test:nemesis only: it misses its bound now and then (4.2-4.9 s without a
// holder against 4 s: every client's calls time out waiting for a connection until the heal), an open bug
// that docs/faults.md names; in npm test it would fail CI at random rather than say something new.
describeNemesis('etcd-3', ['isolate leader', 'isolate member', 'partition', 'pause before write'], {
  longOnly: ['isolate member'],
});
