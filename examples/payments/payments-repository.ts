/**
 * Where payments are kept. The app (graphql.ts, trpc.ts) is written once against
 * `PaymentsRepository<Tx>`; each dialect supplies its own implementation and its own `Tx`,
 * the transaction handle the guard passes to guarded work.
 */
import { asc, eq } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { PgTransactionOf } from '../../src/postgres/index.js';
import type { SqliteDatabase } from '../../src/sqlite/index.js';
import type { Payment } from './payment.js';
import { pgPayments, sqlitePayments } from './tables.js';

export interface PaymentsRepository<Tx> {
  /**
   * Writes a payment through the guarded transaction `tx`, so that it commits together with
   * the stored answer or not at all. Never write payments outside it.
   */
  insert(tx: Tx, accountId: string, payment: Payment): Promise<void>;
  /** The account's committed payments, oldest first. */
  list(accountId: string): Promise<Payment[]>;
}

/**
 * SQLite: `tx` is the store's own connection with its transaction open. Reads go through a
 * second, read-only connection (`reader`): on the writer's connection a read issued while a
 * guarded transaction is open would see that transaction's uncommitted rows, and
 * in WAL mode a second connection reads the last committed state without waiting.
 */
export function sqlitePaymentsRepository(
  reader: BetterSQLite3Database,
): PaymentsRepository<SqliteDatabase> {
  return {
    async insert(tx, accountId, payment) {
      tx.insert(sqlitePayments)
        .values({ ...payment, accountId })
        .run();
    },
    async list(accountId) {
      const rows = reader
        .select()
        .from(sqlitePayments)
        .where(eq(sqlitePayments.accountId, accountId))
        .orderBy(asc(sqlitePayments.createdAt), asc(sqlitePayments.id))
        .all();
      return rows.map(({ accountId: _, ...payment }) => payment);
    },
  };
}

export type PgDb = NodePgDatabase;
export type PgTx = PgTransactionOf<PgDb>;

/** Postgres: `tx` is Drizzle's transaction handle; reads use the pool (committed rows only). */
export function postgresPaymentsRepository(db: PgDb): PaymentsRepository<PgTx> {
  return {
    async insert(tx, accountId, payment) {
      await tx
        .insert(pgPayments)
        .values({ ...payment, accountId, createdAt: new Date(payment.createdAt) });
    },
    async list(accountId) {
      const rows = await db
        .select()
        .from(pgPayments)
        .where(eq(pgPayments.accountId, accountId))
        .orderBy(asc(pgPayments.createdAt), asc(pgPayments.id));
      return rows.map(({ accountId: _, createdAt, ...payment }) => ({
        ...payment,
        createdAt: createdAt.toISOString(),
      }));
    },
  };
}
