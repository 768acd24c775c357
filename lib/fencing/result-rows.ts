/**
 * The values of `column` in whatever a caller's `query` function resolved: a row array (TypeORM,
 * Prisma, Knex on PostgreSQL), a result with `rows` (pg, Knex raw on pg), or `[rows, fields]`
 * (mysql2, Knex raw on MySQL). Searches a few levels deep, in order.
 */
export function columnValues(result: unknown, column: string, depth = 3): unknown[] {
  if (result === null || typeof result !== 'object' || depth < 0) return [];
  if (Array.isArray(result)) return result.flatMap((item) => columnValues(item, column, depth - 1));
  if (column in result) return [(result as Record<string, unknown>)[column]];
  const rows = (result as { rows?: unknown }).rows;
  return Array.isArray(rows) ? columnValues(rows, column, depth - 1) : [];
}
