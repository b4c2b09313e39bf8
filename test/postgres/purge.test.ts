/**
 * purge() on a large table (SPEC S14): it must find expired records through
 * `<table>_expires_at_idx`, not by scanning every live record. A comparison with the volatile
 * `clock_timestamp()` cannot be an index condition; the store compares with a cutoff
 * computed once per statement. Proved with EXPLAIN on an analyzed table of 30,000 live
 * records and a few expired ones.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard } from '../../src/index.js';
import { rowsOf } from '../../src/postgres/db.js';
import { migratePostgres, postgresStore } from '../../src/postgres/index.js';
import { buildStatements } from '../../src/postgres/statements.js';
import { pgIdempotencyTable } from '../../src/postgres/table.js';
import {
  createNodePgDb,
  dropRecordsTable,
  postgresAvailability,
  uniqueTableName,
} from '../support/postgres.js';

const pg = await postgresAvailability();
const LIVE = 30_000;
const EXPIRED = 50;

describe.skipIf(!pg.realPostgres)(
  `purge on a large table${pg.skipReason ? ` (${pg.skipReason})` : ''}`,
  () => {
    const table = uniqueTableName('mg_purge');
    let opened: ReturnType<typeof createNodePgDb>;
    beforeAll(async () => {
      opened = createNodePgDb({ max: 2 });
      await migratePostgres(opened.db, { table });
      const insert = (count: number, expires: string, prefix: string) =>
        opened.db.execute(
          sql.raw(`insert into "${table}" (scope, key, fingerprint, operation, outcome, result,
              expires_at, completed_at)
            select 'acct', '${prefix}' || n, 'fp', 'op', 'committed', '"r"', ${expires}, now()
            from generate_series(1, ${count}) n`),
        );
      await insert(LIVE, `now() + interval '1 day' + n * interval '1 second'`, 'live-');
      await insert(EXPIRED, `now() - interval '1 hour' + n * interval '1 second'`, 'old-');
      await opened.db.execute(sql.raw(`analyze "${table}"`));
    }, 60_000);
    afterAll(async () => {
      await dropRecordsTable(opened.db, table);
      await opened.close();
    });

    it('S14: the purge statement finds expired records through the expires_at index (EXPLAIN)', async () => {
      const purge = buildStatements(pgIdempotencyTable(table)).purge;
      // Planned as the store sends it, with its batch size bound as a parameter.
      const plan = await opened.db.$client.query(`explain (format json) ${purge.sql}`, [1000]);
      const text = JSON.stringify(plan.rows[0]);
      expect(text).toContain(`${table}_expires_at_idx`);
      expect(text).not.toContain('"Seq Scan"');
    });

    it('S14: purge deletes exactly the expired records, in batches, and leaves the live ones', async () => {
      const guard = createGuard({ store: postgresStore(opened.db, { table }) });
      expect(await guard.purge({ batchSize: 20 })).toBe(EXPIRED);
      const [row] = rowsOf<{ n: number }>(
        await opened.db.execute(sql.raw(`select count(*)::int as n from "${table}"`)),
      );
      expect(row?.n).toBe(LIVE);
    });
  },
);
