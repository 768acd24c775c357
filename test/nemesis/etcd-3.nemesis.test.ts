import { describeNemesis } from './nemesis-suite.js';

// The leader isolated from its peers and its clients; a holder partitioned; a holder paused before its write.
describeNemesis('etcd-3', ['isolate member', 'partition', 'pause before write']);
