// One OS process of the SQL multi-process test: `workers` concurrent workers each do `iterations`
// read-modify-writes of a counter row (SELECT, then UPDATE in a separate statement) through ONE
// driver pool of `poolSize` connections, shared with the lock backend, inside withLock
// (or without any lock when `lock` is false, to show that the test can see lost updates).
// argv[2]: JSON { type, url, key, keyPrefix, counter, workers, iterations, poolSize, lock }.
// Prints {"event":"ready"}, waits for "go" on stdin, then prints {"event":"done","holds":[...]}.
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { LockEngine, createLockBackend } from '../../dist/esm/index.js';

const { type, url, key, keyPrefix, counter, workers, iterations, poolSize, lock } = JSON.parse(process.argv[2]);

let pool;
let query;
let sql;
if (type === 'postgres') {
  const { default: pg } = await import('pg');
  pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on('error', () => undefined);
  query = async (text, values) => (await pool.query(text, values)).rows;
  sql = { read: 'SELECT value FROM sql_counters WHERE name = $1', write: 'UPDATE sql_counters SET value = $1 WHERE name = $2' };
} else {
  const { default: mysql } = await import('mysql2/promise');
  pool = mysql.createPool({ uri: url, connectionLimit: poolSize });
  query = async (text, values) => (await pool.execute(text, values))[0];
  sql = { read: 'SELECT value FROM sql_counters WHERE name = ?', write: 'UPDATE sql_counters SET value = ? WHERE name = ?' };
}
const engine = new LockEngine(await createLockBackend({ type, pool }), { keyPrefix, leaseMs: 10_000, waitMs: 120_000 });

const increment = async (fence) => {
  const [row] = await query(sql.read, [counter]);
  const value = Number(row.value);
  // Give the other workers every chance to interleave between the read and the write.
  await delay(Math.random() * 2);
  await query(sql.write, [value + 1, counter]);
  return { value, fence, pid: process.pid };
};

process.stdout.write(JSON.stringify({ event: 'ready' }) + '\n');
await new Promise((resolve) => createInterface({ input: process.stdin }).once('line', resolve));

const holds = [];
await Promise.all(
  Array.from({ length: workers }, async () => {
    for (let i = 0; i < iterations; i++) {
      holds.push(lock ? await engine.withLock(key, (held) => increment(held.fence)) : await increment(undefined));
    }
  }),
);
await engine.close();
await pool.end();
process.stdout.write(JSON.stringify({ event: 'done', holds }) + '\n');
