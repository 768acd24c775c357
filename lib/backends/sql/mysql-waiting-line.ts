import type { MysqlResultHeader } from './mysql-driver.js';
import { named } from './named-params.js';
import { NOW_US } from './mysql-clock.js';
import type { WaitPlace } from './sql-dialect.js';

/**
 * How long a waiter's place as the next in line holds without a poll that keeps it: the next in line
 * polls every NEXT_IN_LINE_POLL_MS (sql-backoff.ts) at most, so only a waiter that left or was cut off lets it lapse.
 */
export const NEXT_IN_LINE_MS = 500;

/**
 * How long a waiter waits before its turn binds: until then, whoever asks first when the key is
 * free takes it (a hand-off without waiting for a poll); from then on, only the waiter next in line.
 */
const PATIENCE_MS = 100;

/** The lease table's columns for the line: who is next for the key, since when it waits (database clock, µs), until when its place holds. */
export const LINE_COLUMNS = [
  'next_owner VARCHAR(255) NULL',
  'next_since_us BIGINT UNSIGNED NULL',
  'next_until DATETIME(3) NULL',
] as const;

/** Whether the row is free for the taker `:owner`: unowned or expired, and no other waiter is next in line that has waited PATIENCE_MS. */
export const FREE_IN_TURN = `owner <=> :owner OR ((owner IS NULL OR expires_at <= UTC_TIMESTAMP(3)) AND
  (next_owner IS NULL OR next_owner <=> :owner OR next_until <= UTC_TIMESTAMP(3) OR next_since_us > ${NOW_US} - ${PATIENCE_MS * 1000}))`;

/** The line as an attempt's read-back of the row saw it. */
export interface LineReadBack {
  readonly next_mine: number | string;
  readonly next_since_us: number | string | null;
  readonly next_ttl_us: number | string | null;
  readonly now_us: number | string;
}

/** The read-back's columns for {@link LineReadBack}. */
export const LINE_READ_BACK = `next_owner <=> :owner AS next_mine, IF(next_owner IS NULL, NULL, next_since_us) AS next_since_us,
  TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), next_until) AS next_ttl_us, ${NOW_US} AS now_us`;

type Change = (sql: string, values: unknown[]) => Promise<MysqlResultHeader>;

/**
 * MySQL has no release notifications, so waiters poll; without a line, the key went to whoever
 * polled first after a release, which is nearly always a client that just released it and asked
 * again at once, and a waiter whose polls had spread out lost turn after turn. So each busy
 * attempt also looks at the line: the row names one waiter as next, and a waiter that has waited
 * longer (by the database clock at its first busy attempt) takes that place over. Once the next in
 * line has waited PATIENCE_MS, only it may take the key when free, until its place lapses
 * (NEXT_IN_LINE_MS without a poll); before that, the key goes to whoever asks first, as a key
 * that changes hands quickly between waiters that barely wait costs no poll per hand-off.
 */
export class MysqlWaitingLine {
  private readonly reserveSql;
  private readonly leaveSql;

  constructor(
    table: string,
    private readonly change: Change,
  ) {
    this.reserveSql = named<'owner' | 'since' | 'ttlUs' | 'key'>(`UPDATE ${table}
SET next_owner = :owner, next_since_us = :since, next_until = UTC_TIMESTAMP(3) + INTERVAL :ttlUs MICROSECOND
WHERE key_hash = :key AND (next_owner IS NULL OR next_owner = :owner OR next_until <= UTC_TIMESTAMP(3) OR next_since_us > :since)`);
    this.leaveSql = `UPDATE ${table} SET next_owner = NULL WHERE key_hash = ? AND next_owner = ?`;
  }

  /** After a busy attempt: takes the place of next in line when it is free, lapsed or held by a later waiter, and keeps it. */
  async keep(place: WaitPlace, read: LineReadBack, key: string, owner: string): Promise<void> {
    place.sinceUs ??= Number(read.now_us);
    const leftMs = read.next_ttl_us === null ? 0 : Number(read.next_ttl_us) / 1000;
    const mine = Number(read.next_mine) === 1 && leftMs > 0;
    if (mine && leftMs > NEXT_IN_LINE_MS / 2) {
      place.next = true;
      return;
    }
    if (!mine && read.next_since_us !== null && leftMs > 0 && Number(read.next_since_us) <= place.sinceUs) {
      place.next = false;
      return;
    }
    const { sql, values } = this.reserveSql;
    const header = await this.change(sql, values({ owner, since: place.sinceUs, ttlUs: NEXT_IN_LINE_MS * 1000, key }));
    place.next = header.affectedRows > 0;
  }

  async leave(key: string, owner: string): Promise<void> {
    await this.change(this.leaveSql, [key, owner]);
  }
}
