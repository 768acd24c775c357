/** A statement whose `?` placeholders stand for named values, some of them several times. */
export interface NamedStatement<Name extends string> {
  readonly sql: string;
  /** The values of the placeholders, in their order in `sql`. */
  readonly values: (params: Readonly<Record<Name, unknown>>) => unknown[];
}

/**
 * Writes a statement with `:name` placeholders (a letter after the colon: `'00:00:00'` is left
 * alone) as one with `?` placeholders, which mysql2 binds by position.
 */
export function named<Name extends string>(text: string): NamedStatement<Name> {
  const names: Name[] = [];
  const sql = text.replace(/:([A-Za-z]\w*)/g, (_match, name: string) => {
    names.push(name as Name);
    return '?';
  });
  return { sql, values: (params) => names.map((name) => params[name]) };
}
