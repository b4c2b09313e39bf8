/**
 * The schema `migratePostgres` works in, checked before it creates anything (SPEC S4, S22).
 *
 * Everything the migrator creates and looks for is schema-qualified, so a connection's
 * `search_path` cannot split it between schemas. What it cannot know is which schema the app
 * means when none is given. The default is `public`; a connection whose `search_path` puts
 * another schema first (a schema per tenant: `tenant1, public`), or on which the table's name
 * finds a table in another schema, says that the app may mean that other one. Guessing wrong
 * would let two tenants share one table, so such a setup is refused with the schemas and the
 * fix; an explicit `schema` is always taken as given.
 */
import { sql } from 'drizzle-orm';
import { type AnyPgDatabase, rowsOf } from './db.js';
import { DEFAULT_SCHEMA, qualifiedName } from './schema-name.js';

interface SchemaFacts {
  /** Whether the schema to migrate in exists. */
  present: boolean;
  /** The first existing schema of the search_path: where unqualified names are created. */
  first: string | null;
  /** The schema of the table the unqualified name finds on the search_path, if any. */
  found: string | null;
}

/** Throws unless `schema` (or, when it is undefined, `public`) is unambiguously where `table` goes. */
export async function assertMigrationSchema(
  tx: AnyPgDatabase,
  table: string,
  schema: string | undefined,
): Promise<void> {
  const target = schema ?? DEFAULT_SCHEMA;
  const [facts] = rowsOf<SchemaFacts>(
    await tx.execute(sql`select
      exists (select 1 from pg_namespace where nspname = ${target}) as present,
      current_schema()::text as first,
      (select n.nspname::text from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where c.oid = to_regclass(${`"${table}"`})) as found`),
  );
  if (!facts?.present) {
    throw new Error(
      `migratePostgres: schema "${target}" does not exist. Create it first (CREATE SCHEMA "${target}"), or pass the schema that holds the records table as { schema }.`,
    );
  }
  if (schema !== undefined) return;
  const other = [facts.first, facts.found].find(
    (name): name is string => name !== null && name !== DEFAULT_SCHEMA,
  );
  if (other === undefined) return;
  const finds = facts.found ? qualifiedName(facts.found, table) : 'no table';
  const path = facts.first ? `starts at "${facts.first}"` : 'names no schema that exists';
  throw new Error(
    `migratePostgres: no schema was given, so the records table "${table}" and its bookkeeping go in "${DEFAULT_SCHEMA}"; but this connection's search_path ${path}, and there the name "${table}" finds ${finds}. Say which schema is meant: migratePostgres(db, { schema: '${other}' }) to keep it in "${other}", or { schema: '${DEFAULT_SCHEMA}' } to keep it in "${DEFAULT_SCHEMA}"; give postgresStore the same schema. See "A schema per tenant" in docs/postgres.md.`,
  );
}
