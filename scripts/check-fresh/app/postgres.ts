// The Postgres store on PGlite (in memory): one guarded call, then its replay.
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import { createGuard } from 'mutation-guard';
import { migratePostgres, postgresStore } from 'mutation-guard/postgres';
import { expect } from './expect.js';

export async function checkPostgres(): Promise<string> {
  const client = new PGlite();
  try {
    const db = drizzle({ client });
    await migratePostgres(db);
    await db.execute(sql`CREATE TABLE payments (id text PRIMARY KEY, amount integer NOT NULL)`);
    const guard = createGuard({ store: postgresStore(db) });
    let runs = 0;
    const pay = () =>
      guard.run({
        scope: 'acct_1',
        key: 'pglite-order-1',
        fingerprint: 'pay:900',
        operation: 'pay',
        work: async (tx) => {
          runs += 1;
          const id = crypto.randomUUID();
          await tx.execute(sql`INSERT INTO payments (id, amount) VALUES (${id}, 900)`);
          return { id, amount: 900 };
        },
      });
    const first = await pay();
    const second = await pay();
    expect(!first.replayed, 'first call says it was replayed');
    expect(second.replayed, 'second call was not a replay');
    expect(second.value.id === first.value.id, 'the replay returned another payment');
    const { rows } = await db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM payments`);
    expect(runs === 1 && rows[0]?.n === 1, `ran ${runs} times, ${rows[0]?.n} payments`);
    return `Postgres store on PGlite: ran once, replayed ${JSON.stringify(second.value)}`;
  } finally {
    await client.close();
  }
}
