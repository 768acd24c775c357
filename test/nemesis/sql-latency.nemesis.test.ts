import { describeNemesis } from './nemesis-suite.js';

// PostgreSQL and MariaDB 20 ms away each way (every proxy delays each byte): a holder cut off must
// still be told it lost the lock at least the drift allowance (lease x 0.01 + 2 ms) before another
// client gets it, counted from its actual signal.
describeNemesis('postgres-20ms', ['partition']);
describeNemesis('mysql-20ms', ['partition']);
