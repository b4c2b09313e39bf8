/**
 * A string as a Postgres string literal, for the store's simple-protocol queries, which take
 * no parameters (pool-transaction.ts; postgres.js in store.ts). Right whatever the session's
 * `standard_conforming_strings`: quotes are doubled, and a value with a backslash is written as
 * an `E'...'` string with its backslashes doubled, where a backslash always escapes. (The
 * same rule as node-postgres's `escapeLiteral`, which a node-postgres client brings itself.)
 */
export function quoteLiteral(value: string): string {
  const quoted = value.replaceAll("'", "''");
  if (!value.includes('\\')) return `'${quoted}'`;
  return ` E'${quoted.replaceAll('\\', '\\\\')}'`;
}
