import pg from 'pg';
import { PostgresServer } from '../harness/postgres-server.js';
import { describeFootprint } from './footprint-runner.js';

/** Rows of released keys go this long after their lease (then at the next sweep). */
const IDLE_MS = 500;

let server: PostgresServer;
let admin: pg.Pool;

describeFootprint({
  name: 'postgres',
  kinds: ['plain'],
  async start() {
    server = await PostgresServer.start();
    admin = new pg.Pool({ connectionString: server.connectionString, max: 1 });
    admin.on('error', () => undefined); // an idle connection dies with the server
  },
  async stop() {
    await admin?.end();
    await server?.destroy();
  },
  options: () => ({ type: 'postgres', url: server.connectionString, idleKeyTtlMs: IDLE_MS }),
  async count() {
    const present = await admin.query("SELECT to_regclass('distributed_locks') IS NOT NULL AS present");
    if (!present.rows[0].present) return 0;
    return Number((await admin.query('SELECT count(*) AS n FROM distributed_locks')).rows[0].n);
  },
  keepsUntilIdle: true,
  // The idle time after each release, then sweeps of at most 10,000 rows each, every idle time.
  settleMs: 60_000,
});
