// The shared counter of the multi-process counter experiment (counter-worker.mjs), in one of three
// places: a Redis key, a SQL row (through a pool the lock backend shares), or a file.
// Each is read and written in separate steps: only the lock keeps two holders' updates apart.
import { closeSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';

/**
 * Opens the counter `spec` names. Resolves { read(), write(value), close() } and, by store:
 * `clock()` (redis: the server's clock in µs, one clock for every process), `enter()`/`leave()`
 * (file: an O_EXCL marker file, `enter` resolves false when another holder is inside),
 * `backend` (sql: the lock backend's config, on the counter's own pool).
 * @param {{ store: 'redis', url: string, key: string }
 *   | { store: 'sql', type: 'postgres' | 'mysql', url: string, name: string, poolSize: number }
 *   | { store: 'file', path: string, insideFile: string }} spec
 */
export async function openCounter(spec) {
  if (spec.store === 'redis') return redisCounter(spec);
  if (spec.store === 'sql') return sqlCounter(spec);
  return fileCounter(spec);
}

async function redisCounter({ url, key }) {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url);
  await redis.ping();
  return {
    read: async () => Number((await redis.get(key)) ?? '0'),
    write: async (value) => void (await redis.set(key, String(value))),
    async clock() {
      const [seconds, micros] = await redis.time();
      return Number(seconds) * 1_000_000 + Number(micros);
    },
    close: () => redis.quit(),
  };
}

async function sqlCounter({ type, url, name, poolSize }) {
  let pool;
  let query;
  let sql;
  if (type === 'postgres') {
    const { default: pg } = await import('pg');
    pool = new pg.Pool({ connectionString: url, max: poolSize });
    pool.on('error', () => undefined);
    query = async (text, values) => (await pool.query(text, values)).rows;
    sql = {
      read: 'SELECT value FROM sql_counters WHERE name = $1',
      write: 'UPDATE sql_counters SET value = $1 WHERE name = $2',
    };
  } else {
    const { default: mysql } = await import('mysql2/promise');
    pool = mysql.createPool({ uri: url, connectionLimit: poolSize });
    query = async (text, values) => (await pool.execute(text, values))[0];
    sql = {
      read: 'SELECT value FROM sql_counters WHERE name = ?',
      write: 'UPDATE sql_counters SET value = ? WHERE name = ?',
    };
  }
  return {
    backend: { type, pool },
    read: async () => Number((await query(sql.read, [name]))[0].value),
    write: async (value) => void (await query(sql.write, [value, name])),
    close: () => pool.end(),
  };
}

function fileCounter({ path, insideFile }) {
  return {
    read: async () => Number(readFileSync(path, 'utf8')),
    write: async (value) => writeFileSync(path, String(value)),
    enter() {
      try {
        closeSync(openSync(insideFile, 'wx'));
        return true;
      } catch {
        return false;
      }
    },
    leave: () => unlinkSync(insideFile),
    close: async () => undefined,
  };
}
