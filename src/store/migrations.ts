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

type Migrator = 'migrateSqlite' | 'migratePostgres';

/**
 * Refuses to migrate when our bookkeeping and the records table disagree about who made it,
 * with a message that says what happened and what to do (docs/migrations.md):
 * - the table is there, but the bookkeeping never created it: another tool owns it
 *   (drizzle-kit, from a schema that re-exports the table), and our CREATE TABLE would only
 *   fail with "already exists";
 * - the bookkeeping says it was created, but it is gone (dropped by hand, or the bookkeeping
 *   copied without it): applying nothing would leave every guarded mutation failing closed on
 *   a missing relation, and creating it behind the bookkeeping's back could fight a tool that
 *   owns it now.
 */
export function assertOneOwner(
  migrator: Migrator,
  table: string,
  applied: ReadonlySet<string>,
  tableExists: boolean,
): void {
  if (applied.size === 0 && tableExists) {
    throw new Error(
      `${migrator}: table "${table}" already exists, but "${table}_migrations" has no record of creating it, so something else made it (drizzle-kit migrate or push, from a schema that re-exports the table). Give the table one owner: if drizzle-kit manages it, stop calling ${migrator}. See docs/migrations.md in the mutation-guard package.`,
    );
  }
  if (applied.size > 0 && !tableExists) {
    throw new Error(
      `${migrator}: "${table}_migrations" records ${[...applied].sort().join(', ')} as applied, but table "${table}" does not exist (dropped after it was created?); nothing was changed. To create it afresh (its records are gone already), drop "${table}_migrations" too and call ${migrator} again; if drizzle-kit owns the table, let drizzle-kit create it. See docs/migrations.md in the mutation-guard package.`,
    );
  }
}
