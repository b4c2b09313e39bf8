/**
 * The migrations the package ships (drizzle/sqlite, drizzle/postgres), read the same way by
 * both dialects' migrate.ts: drizzle-kit's journal lists them in order, and each file's
 * statements are separated by drizzle-kit's breakpoint marker. Each dialect renames the
 * default table in them its own way.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

export interface ShippedMigration {
  tag: string;
  /** SHA-256 of the shipped file, before renaming: what was applied, for operators. */
  hash: string;
  /** The file's statements, as shipped (the default table name). */
  statements: string[];
}

export const BREAKPOINT = '--> statement-breakpoint';

/** Reads every migration in `folder` (a URL ending in `/`), in the journal's order. */
export function readMigrations(folder: URL): ShippedMigration[] {
  const journal = JSON.parse(readFileSync(new URL('meta/_journal.json', folder), 'utf8')) as {
    entries: { idx: number; tag: string }[];
  };
  return [...journal.entries]
    .sort((a, b) => a.idx - b.idx)
    .map(({ tag }) => {
      const text = readFileSync(new URL(`${tag}.sql`, folder), 'utf8');
      return {
        tag,
        hash: createHash('sha256').update(text).digest('hex'),
        statements: text
          .split(BREAKPOINT)
          .map((statement) => statement.trim())
          .filter((statement) => statement.length > 0),
      };
    });
}

/**
 * The error message for a records table that is there although our bookkeeping never created
 * it: another tool owns it (drizzle-kit, from a schema that re-exports the table). Running our
 * CREATE TABLE would only fail with "already exists"; say what happened and what to do.
 */
export function foreignTable(migrator: 'migrateSqlite' | 'migratePostgres', table: string) {
  return `${migrator}: table "${table}" already exists, but "${table}_migrations" has no record of creating it, so something else made it (drizzle-kit migrate or push, from a schema that re-exports the table). Give the table one owner: if drizzle-kit manages it, stop calling ${migrator}. See docs/migrations.md in the mutation-guard package.`;
}

/**
 * The error message for the opposite: our bookkeeping says the table was made, but it is not
 * there (dropped by hand, or the bookkeeping was copied without it). Applying nothing would
 * leave every guarded mutation failing closed on a missing relation; creating it afresh
 * behind the bookkeeping's back could fight a tool that owns it now. Say what happened and
 * what to do.
 */
export function missingTable(
  migrator: 'migrateSqlite' | 'migratePostgres',
  table: string,
  applied: Iterable<string>,
) {
  return `${migrator}: "${table}_migrations" records ${[...applied].sort().join(', ')} as applied, but table "${table}" does not exist (dropped after it was created?); nothing was changed. To create it afresh (its records are gone already), drop "${table}_migrations" too and call ${migrator} again; if drizzle-kit owns the table, let drizzle-kit create it. See docs/migrations.md in the mutation-guard package.`;
}
