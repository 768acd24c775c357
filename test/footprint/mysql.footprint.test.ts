import mysql from 'mysql2/promise';
import { MariadbServer } from '../harness/mariadb-server.js';
import { describeFootprint } from './footprint-runner.js';

/** Rows of released keys go this long after their lease (then at the next sweep). */
const IDLE_MS = 500;

let server: MariadbServer;
let admin: mysql.Pool;

describeFootprint({
  name: 'mysql',
  kinds: ['plain'],
  async start() {
    server = await MariadbServer.start();
    admin = mysql.createPool({ uri: server.uri, connectionLimit: 1 });
  },
  async stop() {
    await admin?.end();
    await server?.destroy();
  },
  options: () => ({ type: 'mysql', url: server.uri, idleKeyTtlMs: IDLE_MS }),
  async count() {
    const [tables] = await admin.query(
      "SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'distributed_locks'",
    );
    if (Number((tables as { n: number }[])[0].n) === 0) return 0;
    const [rows] = await admin.query('SELECT COUNT(*) AS n FROM distributed_locks');
    return Number((rows as { n: number }[])[0].n);
  },
  keepsUntilIdle: true,
  // The idle time after each release, then sweeps of at most 10,000 rows each, every idle time.
  settleMs: 60_000,
});
