/**
 * The database's UTC clock in µs since 1970, in SQL: a fresh row's fence and the least fence of every
 * acquisition (see docs/backends/sql.md, Footprint), and a waiter's place in line.
 */
export const NOW_US = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))";

/**
 * UTC_TIMESTAMP(3) is the clock cut down to the ms: a lease counted from it could start up to 1 ms
 * before the statement ran (and before its request was sent). Every lease is set this much longer,
 * so it never ends sooner than its length after the statement ran.
 */
export const CLOCK_STEP_US = 1_000;
