import { describeNemesis } from './nemesis-suite.js';

// The store's servers run 1 % fast (libfaketime; store-clock.ts): their leases end 1 % early, which
// the drift allowance (lease x 0.01 + 2 ms) must cover. PostgreSQL runs in npm test; MariaDB and
// ZooKeeper in npm run test:nemesis. redis-server 7.0 does not start under libfaketime 0.9.10 and
// etcd reads the clock without the C library: no row (docs/faults.md, Clocks on the servers).
describeNemesis('postgres-clock-fast', ['store clock fast']);
describeNemesis('mysql-clock-fast', ['store clock fast'], { longOnly: ['store clock fast'] });
describeNemesis('zookeeper-clock-fast', ['store clock fast'], { longOnly: ['store clock fast'] });
