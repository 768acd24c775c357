// What a fenced write costs over the plain write, µs per write, one caller, paired: the two kinds
// alternate round by round in the same process, on the same connection, so drift hits both alike.
//   PostgreSQL: BEGIN; UPDATE one row; COMMIT   vs   BEGIN; SqlFenceGuard.check; UPDATE; COMMIT
//   Redis:      SET                              vs   RedisFenceGuard.set (one EVALSHA)
// The fence grows by one per write (each write a new holder), so every check raises it.
//   npm run bench:fence [-- --writes 2000 --rounds 9]
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { loadPackage } from './lib/package-under-test.mjs';
import { startPostgres } from './lib/postgres-server.mjs';
import { redisVersion, startRedis } from './lib/redis-server.mjs';
import { median, round } from './lib/stats.mjs';

const { values } = parseArgs({
  options: { writes: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '9' } },
});
const writes = Number(values.writes);
const rounds = Number(values.rounds);
const { SqlFenceGuard, RedisFenceGuard } = await loadPackage();

/** µs per call of `write(i)`, over `writes` sequential calls. */
async function timed(write, offset) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < writes; i++) await write(offset + i);
  return Number(process.hrtime.bigint() - start) / 1000 / writes;
}

/** Runs the kinds alternately (order flipped every round) after one warm-up round; medians and the paired difference and ratio. */
async function paired(kinds) {
  const names = Object.keys(kinds);
  const us = Object.fromEntries(names.map((name) => [name, []]));
  let offset = 1;
  for (let r = -1; r < rounds; r++) {
    for (const name of r % 2 ? names : [...names].reverse()) {
      const value = await timed(kinds[name], offset);
      offset += writes;
      if (r >= 0) us[name].push(value);
    }
  }
  const [plain, fenced] = names;
  const diffs = us[plain].map((p, i) => us[fenced][i] - p);
  const ratios = us[plain].map((p, i) => us[fenced][i] / p);
  return {
    [plain]: round(median(us[plain]), 1),
    [fenced]: round(median(us[fenced]), 1),
    differenceUs: round(median(diffs), 1),
    ratio: round(median(ratios), 2),
  };
}

const results = {};
const postgres = await startPostgres();
try {
  const client = new pg.Client({ connectionString: postgres.connectionString });
  await client.connect();
  const guard = new SqlFenceGuard({ dialect: 'postgres' });
  const query = (sql, params) => client.query(sql, params);
  await guard.ensureTable(query);
  await client.query('CREATE TABLE stock (sku text PRIMARY KEY, qty int NOT NULL)');
  await client.query("INSERT INTO stock VALUES ('apple', 0)");
  const update = (i) => client.query('UPDATE stock SET qty = $1 WHERE sku = $2', [i, 'apple']);
  results.postgres = await paired({
    plainUs: async (i) => {
      await client.query('BEGIN');
      await update(i);
      await client.query('COMMIT');
    },
    fencedUs: async (i) => {
      await client.query('BEGIN');
      await guard.check(query, 'stock:apple', i);
      await update(i);
      await client.query('COMMIT');
    },
  });
  await client.end();
} finally {
  await postgres.stop();
}

const redis = await startRedis();
try {
  const client = new Redis(redis.port, '127.0.0.1');
  const guard = new RedisFenceGuard(client);
  results.redis = await paired({
    plainUs: (i) => client.set('stock:apple', String(i)),
    fencedUs: (i) => guard.set('stock:apple', String(i), i),
  });
  client.disconnect();
} finally {
  redis.stop();
}

console.log(
  `fenced vs plain write, µs per write, one caller, ${rounds} paired rounds of ${writes} writes, medians (node ${process.version}, PostgreSQL 15, redis ${redisVersion()})`,
);
console.log('store      | plain µs | fenced µs | difference µs | fenced / plain');
for (const [store, row] of Object.entries(results)) {
  console.log(
    `${store.padEnd(10)} | ${String(row.plainUs).padStart(8)} | ${String(row.fencedUs).padStart(9)} | ${String(row.differenceUs).padStart(13)} | ${String(row.ratio).padStart(6)}`,
  );
}
console.log(JSON.stringify(results));
