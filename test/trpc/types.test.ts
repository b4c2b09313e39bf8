import { initTRPC } from '@trpc/server';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { createGuard } from '../../src/index.js';
import type { PgTransactionOf } from '../../src/postgres/index.js';
import { type SqliteDatabase, sqliteStore } from '../../src/sqlite/index.js';
import { type IdempotencyContext, idempotency } from '../../src/trpc/index.js';
import type { createNodePgDb } from '../support/postgres.js';
import { sqliteGuard } from './sqlite.js';

interface Context {
  userId: string;
}

describe('types (SPEC S8: the transaction reaches the procedure through ctx)', () => {
  it('S8: ctx.idempotency.tx is the SQLite store transaction type', () => {
    const { db } = sqliteGuard();
    const guard = createGuard({ store: sqliteStore(db) });
    const t = initTRPC.context<Context>().create();
    const guarded = idempotency({ guard, scope: (ctx: Context) => ctx.userId });
    t.procedure
      .input(z.object({ amount: z.number() }))
      .concat(guarded)
      .mutation(({ ctx, input }) => {
        expectTypeOf(ctx.idempotency).toEqualTypeOf<IdempotencyContext<SqliteDatabase>>();
        expectTypeOf(ctx.idempotency.tx).toEqualTypeOf<SqliteDatabase>();
        expectTypeOf(ctx.idempotency.key).toEqualTypeOf<string>();
        expectTypeOf(ctx.userId).toEqualTypeOf<string>();
        expectTypeOf(input).toEqualTypeOf<{ amount: number }>();
        return input.amount;
      });
  });

  it('S8: ctx.idempotency.tx is the Postgres transaction of the app database', () => {
    type Db = ReturnType<typeof createNodePgDb>['db'];
    type Tx = PgTransactionOf<Db>;
    const guard = createGuard<Tx>({ store: {} as never });
    const t = initTRPC.create();
    t.procedure.concat(idempotency({ guard, scope: () => 'tenant' })).mutation(({ ctx }) => {
      expectTypeOf(ctx.idempotency.tx).toEqualTypeOf<Tx>();
      expectTypeOf(ctx.idempotency.tx.execute).toBeFunction();
    });
  });

  it('S3: with required: false, ctx.idempotency may be undefined', () => {
    const guard = createGuard<SqliteDatabase>({ store: {} as never });
    const t = initTRPC.create();
    t.procedure
      .concat(idempotency({ guard, scope: () => 'tenant', required: false }))
      .mutation(({ ctx }) => {
        expectTypeOf(ctx.idempotency).toEqualTypeOf<
          IdempotencyContext<SqliteDatabase> | undefined
        >();
      });
  });

  it('S4: a scope typed for another context cannot be concatenated', () => {
    const guard = createGuard<SqliteDatabase>({ store: {} as never });
    const t = initTRPC.context<{ tenant: number }>().create();
    const guarded = idempotency({ guard, scope: (ctx: Context) => ctx.userId });
    // @ts-expect-error the app context has no `userId`
    t.procedure.concat(guarded);
  });
});
