/**
 * A schema per tenant (SPEC S4, S22): the store, `migratePostgres` and the functions they call
 * work in the schema they are given, by schema-qualified names, so that a connection's
 * `search_path` never sends one tenant's records to another's table; and a setup where the
 * migrator could not tell which schema is meant is refused, naming the schemas and the fix.
 * Two tenant schemas beside `public` in one database, on every driver.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard } from '../../src/index.js';
import { rowsOf } from '../../src/postgres/db.js';
import {
  type AnyPgDatabase,
  migratePostgres,
  pgIdempotencyTable,
  postgresFunctionsSql,
  postgresStore,
} from '../../src/postgres/index.js';
import { deferred } from '../support/deferred.js';
import {
  createNodePgDb,
  createPgliteDb,
  createPostgresJsDb,
  dropRecordsTable,
  postgresAvailability,
  type TestDb,
  type TestDbOptions,
  uniqueTableName,
} from '../support/postgres.js';

const pg = await postgresAvailability();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const drivers: {
  name: string;
  open: (options?: TestDbOptions) => TestDb<AnyPgDatabase>;
  /** PGlite has one connection: a search_path is set on it, not per connection. */
  server: boolean;
}[] = [
  { name: 'node-postgres', open: createNodePgDb, server: true },
  { name: 'postgres.js', open: createPostgresJsDb, server: true },
  { name: 'PGlite', open: () => createPgliteDb(), server: false },
];

for (const driver of drivers) {
  const skip = driver.server && !pg.realPostgres;
  describe.skipIf(skip)(
    `a schema per tenant on ${driver.name} ${skip ? pg.skipReason : ''}`,
    () => {
      const suffix = randomBytes(5).toString('hex');
      const tenant1 = `mg_tenant1_${suffix}`;
      const tenant2 = `mg_tenant2_${suffix}`;
      // Every schema holds a table of this one name: the name alone cannot tell them apart.
      const table = uniqueTableName('mg_schemas');
      const opened: TestDb<AnyPgDatabase>[] = [];
      /** The main app's connection, on the server's default search_path (public). */
      let main: AnyPgDatabase;
      /** A tenant's connection: its own schema first, then public. */
      let onTenant1Path: AnyPgDatabase;

      function open(options?: TestDbOptions): AnyPgDatabase {
        const connection = driver.open(options);
        opened.push(connection);
        return connection.db;
      }

      beforeAll(async () => {
        main = open();
        for (const schema of [tenant1, tenant2]) {
          await main.execute(sql.raw(`create schema "${schema}"`));
        }
        await migratePostgres(main, { table });
        if (driver.server) {
          onTenant1Path = open({ searchPath: `"${tenant1}", public` });
        } else {
          // One connection: the tenant's path is the main app's too.
          onTenant1Path = main;
          await main.execute(sql.raw(`set search_path to "${tenant1}", public`));
        }
      });
      afterAll(async () => {
        if (main) {
          await main.execute(sql.raw(`drop schema if exists "${tenant1}", "${tenant2}" cascade`));
          await main.execute(sql.raw('set search_path to default'));
          await dropRecordsTable(main, table);
        }
        for (const connection of opened) await connection.close();
      });

      const pay = (db: AnyPgDatabase, schema: string | undefined, answer: string) =>
        createGuard({ store: postgresStore(db, { table, schema }) }).run({
          scope: 'acct',
          key: 'k-1',
          fingerprint: 'fp',
          operation: 'pay',
          work: async () => answer,
        });

      /** The schemas holding a relation or function named `name`. */
      async function schemasOf(name: string): Promise<string[]> {
        const rows = rowsOf<{ schema: string }>(
          await main.execute(sql`
          select n.nspname as schema from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where c.relname = ${name}
          union select n.nspname from pg_proc p join pg_namespace n on n.oid = p.pronamespace
          where p.proname = ${name}
          order by 1`),
        );
        return rows.map((row) => row.schema);
      }

      it('S22: with public migrated and search_path "tenant1, public", migratePostgres given tenant1 creates its table, functions and bookkeeping there', async () => {
        expect(await migratePostgres(onTenant1Path, { table, schema: tenant1 })).toEqual({
          applied: ['0000_init'],
        });
        for (const name of [table, `${table}_migrations`, `${table}_begin`, `${table}_finish`]) {
          expect(await schemasOf(name), name).toEqual([tenant1, 'public'].sort());
        }
        expect(await migratePostgres(onTenant1Path, { table, schema: tenant1 })).toEqual({
          applied: [],
        });
        // tenant2's, from a connection whose path does not name it (the tests below use it).
        expect(await migratePostgres(main, { table, schema: tenant2 })).toMatchObject({
          applied: ['0000_init'],
        });
      });

      it("S4: the main app and tenant1 never replay each other's answer for the same scope and key, whatever the search_path", async () => {
        expect(await pay(main, undefined, 'main')).toEqual({ value: 'main', replayed: false });
        // tenant1's connection finds its own table first on its path; its store is told anyway.
        expect(await pay(onTenant1Path, tenant1, 'tenant1')).toEqual({
          value: 'tenant1',
          replayed: false,
        });
        // The default schema is public, even on a connection whose path puts tenant1 first.
        expect(await pay(onTenant1Path, undefined, 'other')).toEqual({
          value: 'main',
          replayed: true,
        });
        expect(await pay(main, tenant1, 'other')).toEqual({ value: 'tenant1', replayed: true });
      });

      it('S4: tenant1 and tenant2 on one connection, fired at once for the same scope and keys, each run their own work and keep their own records', async () => {
        const keys = ['c-1', 'c-2', 'c-3'];
        const [one, two] = [tenant1, tenant2].map((schema) => {
          const guard = createGuard({ store: postgresStore(main, { table, schema }) });
          return (key: string, work: () => Promise<void>) =>
            guard.run({
              scope: 'acct',
              key,
              fingerprint: `fp-${schema}`,
              operation: 'pay',
              work: async () => {
                await work();
                return `${schema}:${key}`;
              },
            });
        });
        // tenant1's calls, fired at once, hold their keys until tenant2's have been fired too.
        const started = keys.map(() => deferred());
        const release = deferred();
        const first = Promise.all(
          keys.map((key, i) =>
            one!(key, async () => {
              started[i]!.resolve();
              await release.promise;
            }),
          ),
        );
        // (PGlite runs one transaction at a time on its one connection: the first is running.)
        await Promise.all((driver.server ? started : started.slice(0, 1)).map((s) => s.promise));
        // tenant2's, fired at once while tenant1's run (on PGlite they wait for its one connection).
        const second = Promise.all(keys.map((key) => two!(key, () => sleep(20))));
        setTimeout(release.resolve, 200);
        expect(await Promise.all([first, second])).toEqual(
          [tenant1, tenant2].map((schema) =>
            keys.map((key) => ({ value: `${schema}:${key}`, replayed: false })),
          ),
        );
        for (const schema of [tenant1, tenant2]) {
          const rows = rowsOf<{ key: string; fingerprint: string }>(
            await main.execute(
              sql`select key, fingerprint from ${sql.identifier(schema)}.${sql.identifier(table)} where key like 'c-%' order by key`,
            ),
          );
          expect(rows).toEqual(keys.map((key) => ({ key, fingerprint: `fp-${schema}` })));
        }
      });

      it('S22: without a schema, migratePostgres on a path that puts tenant1 before public is refused, naming both schemas and the fix', async () => {
        const other = uniqueTableName('mg_schemas_amb');
        // (On PGlite the main app's connection is the tenant's: it says which schema it means.)
        await migratePostgres(main, { table: other, schema: 'public' });
        try {
          const refused = await migratePostgres(onTenant1Path, { table: other }).catch(
            (error: unknown) => error,
          );
          expect(refused).toBeInstanceOf(Error);
          const message = (refused as Error).message;
          expect(message).toContain(`"${tenant1}"`);
          expect(message).toContain('"public"');
          expect(message).toContain(`schema: '${tenant1}'`);
          expect(message).toContain("schema: 'public'");
          expect(message).not.toMatch(/drizzle-kit/);
          // Nothing was created in tenant1.
          expect(await schemasOf(other)).toEqual(['public']);
          expect(await schemasOf(`${other}_migrations`)).toEqual(['public']);
          // Said outright, either schema works.
          expect(await migratePostgres(onTenant1Path, { table: other, schema: 'public' })).toEqual({
            applied: [],
          });
        } finally {
          await dropRecordsTable(main, other);
        }
      });

      it('S22: without a schema, a table that the name finds in another schema than public is refused too', async () => {
        const only = uniqueTableName('mg_schemas_only');
        await migratePostgres(main, { table: only, schema: tenant1 });
        const path = `public, "${tenant1}"`;
        const db = driver.server ? open({ searchPath: path }) : main;
        if (!driver.server) await main.execute(sql.raw(`set search_path to ${path}`));
        try {
          await expect(migratePostgres(db, { table: only })).rejects.toThrow(
            new RegExp(`finds "${tenant1}"."${only}".*schema: '${tenant1}'`),
          );
          expect(await schemasOf(only)).toEqual([tenant1]);
        } finally {
          if (!driver.server) {
            await main.execute(sql.raw(`set search_path to "${tenant1}", public`));
          }
        }
      });

      it('S22: a table built for one schema and a store told another is refused when the store is made', () => {
        expect(() =>
          postgresStore(main, {
            table: pgIdempotencyTable(table, { schema: tenant1 }),
            schema: tenant2,
          }),
        ).toThrow(new RegExp(`"${tenant1}".*"${tenant2}"`));
        expect(() =>
          postgresStore(main, { table: pgIdempotencyTable(table), schema: tenant2 }),
        ).toThrow(/"public".*"mg_tenant2_/);
      });

      it('S22: a table built with pgIdempotencyTable(name, { schema }) is found in its schema', async () => {
        const guard = createGuard({
          store: postgresStore(main, { table: pgIdempotencyTable(table, { schema: tenant2 }) }),
        });
        const run = () =>
          guard.run({
            scope: 's',
            key: 'k',
            fingerprint: 'f',
            operation: 'pay',
            work: async () => 2,
          });
        expect(await run()).toEqual({ value: 2, replayed: false });
        expect(await run()).toEqual({ value: 2, replayed: true });
        const count = async (schema: string) =>
          rowsOf<{ n: number }>(
            await main.execute(
              sql`select count(*)::int as n from ${sql.identifier(schema)}.${sql.identifier(table)} where scope = 's'`,
            ),
          )[0]?.n;
        expect([await count(tenant2), await count('public')]).toEqual([1, 0]);
      });

      it('S22: a schema that does not exist is named, with the fix', async () => {
        const missing = `mg_missing_${suffix}`;
        await expect(migratePostgres(main, { table, schema: missing })).rejects.toThrow(
          new RegExp(`schema "${missing}" does not exist.*create schema`, 'i'),
        );
      });

      it('S22: postgresFunctionsSql({ schema }) names the table and every function with their schema', async () => {
        const text = await postgresFunctionsSql({ table, schema: tenant1 });
        // Every quoted name that starts with the table's is qualified, constraint names apart.
        const unqualified = [...text.matchAll(new RegExp(`(.)"${table}(_[a-z_]+)?"`, 'g'))].filter(
          ([, before]) => before !== '.',
        );
        expect(unqualified.map(([match]) => match)).toEqual([]);
        expect(text).toContain(`"${tenant1}"."${table}_begin"(`);
      });
    },
  );
}
