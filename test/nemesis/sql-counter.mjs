// The guarded counter of the nemesis runs on PostgreSQL and MariaDB: a row written in a
// transaction that first passes SqlFenceGuard.check with the holder's fence. Reached directly (not
// through a client's proxy): a cut-off holder still reaches its resource.
// `write` resolves what the row held just before (the checker's lost updates and stale writes).

/** @param {{ dialect: 'postgres' | 'mysql', url: string }} config @param {string} id @param {string} root the built package's ESM directory URL */
export async function sqlCounter(config, id, root) {
  const { SqlFenceGuard } = await import(new URL('fencing/sql-fence-guard.js', root).href);
  const guard = new SqlFenceGuard({ dialect: config.dialect });
  const db = config.dialect === 'postgres' ? await postgres(config.url) : await mysql(config.url);
  await guard.ensureTable(db.query);
  const ddl =
    config.dialect === 'postgres'
      ? 'CREATE TABLE IF NOT EXISTS nemesis_counters (id text PRIMARY KEY, n bigint NOT NULL, fence bigint NOT NULL)'
      : 'CREATE TABLE IF NOT EXISTS nemesis_counters (id varchar(255) PRIMARY KEY, n bigint NOT NULL, fence bigint NOT NULL)';
  // Three clients create it at once: the loser of a PostgreSQL catalog race retries.
  await db.query(ddl, []).catch(() => db.query(ddl, []));
  const p = (i) => (config.dialect === 'postgres' ? `$${i}` : '?');
  await db.query(
    config.dialect === 'postgres'
      ? 'INSERT INTO nemesis_counters VALUES ($1, 0, -1) ON CONFLICT DO NOTHING'
      : 'INSERT IGNORE INTO nemesis_counters VALUES (?, 0, -1)',
    [id],
  );
  return {
    async read() {
      const rows = await db.query(`SELECT n FROM nemesis_counters WHERE id = ${p(1)}`, [id]);
      return Number(rows[0].n);
    },
    async write(value, fence) {
      return db.transaction(async (query) => {
        await guard.check(query, id, fence);
        const [row] = await query(`SELECT n, fence FROM nemesis_counters WHERE id = ${p(1)} FOR UPDATE`, [id]);
        await query(`UPDATE nemesis_counters SET n = ${p(1)}, fence = ${p(2)} WHERE id = ${p(3)}`, [value, fence, id]);
        return [Number(row.n), Number(row.fence)];
      });
    },
    close: () => db.close(),
  };
}

async function postgres(url) {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => undefined);
  const query = (sql, params) => pool.query(sql, params).then((result) => result.rows);
  return {
    query,
    async transaction(work) {
      const client = await pool.connect();
      // A checked-out client reports its connection's end (a server restart) on itself, not on the pool.
      let broken;
      const onError = (error) => (broken = error);
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await work((sql, params) => client.query(sql, params).then((r) => r.rows));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}

async function mysql(url) {
  const { createPool } = await import('mysql2/promise');
  const pool = createPool({ uri: url, connectionLimit: 2 });
  const query = (sql, params) => pool.query(sql, params).then(([rows]) => rows);
  return {
    query,
    async transaction(work) {
      const connection = await pool.getConnection();
      try {
        await connection.beginTransaction();
        const result = await work((sql, params) => connection.query(sql, params).then(([rows]) => rows));
        await connection.commit();
        return result;
      } catch (error) {
        await connection.rollback().catch(() => undefined);
        throw error;
      } finally {
        connection.release();
      }
    },
    close: () => pool.end(),
  };
}
