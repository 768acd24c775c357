import { FLOOR_RESOURCE, type FenceDialect } from './fence-table.js';

/** The column every statement that returns a fence names it by; always text, so no driver turns it into a BigInt or rounds it. */
export const HIGHEST = 'fence_highest';

/** The SQL a `SqlFenceGuard` runs, for one dialect and one (quoted) table. Placeholders are positional. */
export interface FenceStatements {
  /** (resource, fence): raises the resource's highest fence, or refuses. */
  readonly check: string;
  /**
   * How `check` refuses: `'returns'`, the statement returns the highest fence (PostgreSQL);
   * `'fails'`, the statement fails and `readHighest` says why (MySQL: no RETURNING there).
   */
  readonly refusal: 'returns' | 'fails';
  /** (resource): the highest fences of the resource and of the floor, read with a lock. */
  readonly readHighest: string;
  /** (olderThanMs): raises the floor to the highest fence of the rows idle that long; returns the floor (PostgreSQL). */
  readonly raiseFloor: string;
  /** (): the floor, when `raiseFloor` does not return it (MySQL). */
  readonly readFloor: string | undefined;
  /** (olderThanMs, floor): deletes the rows idle that long whose fence is covered by the floor. */
  readonly prune: string;
}

const FLOOR = `'${FLOOR_RESOURCE}'`;

/** A value that makes the statement fail (BIGINT overflow, an error in every sql_mode) when `value` is at least 1. */
const fail = (value: string) => `9223372036854775807 + ${value}`;

/**
 * The statements for `dialect` on table `t`.
 *
 * A check is one upsert. A new row starts at `max(fence, floor)`, and an existing row takes
 * `max(highest, fence)`: on PostgreSQL the statement returns the stored value, larger than the
 * fence when it refused. MySQL has no RETURNING (MariaDB has, but not for the updated row of an
 * upsert), and what the driver reports (affected rows) depends on the driver and its flags; so there a
 * refusal makes the statement itself fail (an overflow in the assignment), which every driver reports
 * as an error. The floor row is read with a share lock, so a prune that raises it waits for the
 * check's transaction, and a check waits for the prune's.
 */
export function fenceStatements(dialect: FenceDialect, t: string): FenceStatements {
  if (dialect === 'postgres') {
    const idle = `touched_at < now() - $1::bigint * interval '1 millisecond'`;
    return {
      check: `INSERT INTO ${t} AS f (resource, highest, touched_at)
VALUES ($1, GREATEST($2::bigint, COALESCE((SELECT fl.highest FROM ${t} AS fl WHERE fl.resource = ${FLOOR} FOR SHARE), 0)), now())
ON CONFLICT (resource) DO UPDATE SET highest = GREATEST(f.highest, EXCLUDED.highest),
  touched_at = CASE WHEN f.highest <= EXCLUDED.highest THEN EXCLUDED.touched_at ELSE f.touched_at END
RETURNING highest::text AS ${HIGHEST}`,
      refusal: 'returns',
      readHighest: `SELECT highest::text AS ${HIGHEST} FROM ${t} WHERE resource IN ($1, ${FLOOR}) FOR SHARE`,
      raiseFloor: `INSERT INTO ${t} AS f (resource, highest, touched_at)
SELECT ${FLOOR}, COALESCE(max(highest), 0), now() FROM ${t} WHERE resource <> ${FLOOR} AND ${idle}
ON CONFLICT (resource) DO UPDATE SET highest = GREATEST(f.highest, EXCLUDED.highest), touched_at = EXCLUDED.touched_at
RETURNING highest::text AS ${HIGHEST}`,
      readFloor: undefined,
      prune: `DELETE FROM ${t} WHERE resource <> ${FLOOR} AND ${idle} AND highest <= $2::bigint`,
    };
  }
  const idle = `touched_at < UTC_TIMESTAMP(6) - INTERVAL ? * 1000 MICROSECOND`;
  return {
    check: `INSERT INTO ${t} (resource, highest, touched_at)
SELECT ?, IF(? >= COALESCE(fl.highest, 0), ?, ${fail('fl.highest')}), UTC_TIMESTAMP(6)
FROM (SELECT 1 AS one) AS one LEFT JOIN ${t} AS fl ON fl.resource = ${FLOOR} LOCK IN SHARE MODE
ON DUPLICATE KEY UPDATE touched_at = VALUES(touched_at),
  highest = IF(VALUES(highest) >= ${t}.highest, VALUES(highest), ${fail(`${t}.highest`)})`,
    refusal: 'fails',
    readHighest: `SELECT CAST(highest AS CHAR) AS ${HIGHEST} FROM ${t} WHERE resource IN (?, ${FLOOR}) LOCK IN SHARE MODE`,
    raiseFloor: `INSERT INTO ${t} (resource, highest, touched_at)
SELECT ${FLOOR}, COALESCE(MAX(old.highest), 0), UTC_TIMESTAMP(6) FROM ${t} AS old WHERE old.resource <> ${FLOOR} AND old.${idle}
ON DUPLICATE KEY UPDATE highest = GREATEST(${t}.highest, VALUES(highest)), touched_at = VALUES(touched_at)`,
    readFloor: `SELECT CAST(highest AS CHAR) AS ${HIGHEST} FROM ${t} WHERE resource = ${FLOOR} FOR UPDATE`,
    prune: `DELETE FROM ${t} WHERE resource <> ${FLOOR} AND ${idle} AND highest <= ?`,
  };
}
