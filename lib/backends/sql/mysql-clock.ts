/**
 * The database's UTC clock in µs since 1970, in SQL: a fresh row's fence and the least fence of every
 * acquisition (see docs/backends/sql.md, Footprint), and a waiter's place in line.
 */
export const NOW_US = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))";
