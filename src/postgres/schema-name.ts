/**
 * The Postgres schema the records table lives in, and how its names are written (SPEC S4,
 * S22). Every statement of ours names the schema, so that a connection's `search_path` never
 * decides which table (or function) a name means: with a schema per tenant, a path such as
 * `tenant1, public` would otherwise find another tenant's table, or public's, under the same
 * name. Kept free of imports: src/postgres/table.ts imports it, and drizzle-kit loads that
 * file directly.
 */

/**
 * The schema used when none is given: where an ordinary single-schema database keeps its
 * tables, and where Drizzle puts a table built without `pgSchema`.
 */
export const DEFAULT_SCHEMA = 'public';

/**
 * Schema names are spliced into SQL (qualified names in the statements, the migrations and
 * the functions' bodies), so only plain identifiers are accepted, up to Postgres's 63 bytes.
 */
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Throws a TypeError unless `name` is a usable schema name. */
export function assertSchemaName(name: string): void {
  if (typeof name !== 'string' || !SCHEMA_NAME.test(name)) {
    throw new TypeError(
      `mutation-guard/postgres: schema name ${JSON.stringify(name)} must be 1-63 letters, digits or underscores, not starting with a digit.`,
    );
  }
}

/** `"schema"."name"`: both are checked plain identifiers, so quoting them is enough. */
export function qualifiedName(schema: string, name: string): string {
  return `"${schema}"."${name}"`;
}
