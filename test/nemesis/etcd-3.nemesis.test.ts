import { describeNemesis } from './nemesis-suite.js';

// The leader, then the member the clients use, isolated from its peers and its clients; a holder partitioned; a holder paused before its write.
describeNemesis('etcd-3', ['isolate leader', 'isolate member', 'partition', 'pause before write']);
