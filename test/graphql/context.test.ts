/**
 * What a resolver of a guarded mutation finds at `context.idempotency` (SPEC S8): the
 * transaction, the key (to derive a downstream key from), its hash and the scope; and that
 * it is gone once the answer is out, so that a resolver still running cannot write through
 * a transaction that has ended.
 */
import type { IResolvers } from '@graphql-tools/utils';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type IdempotencyContext,
  idempotentDirectiveTypeDefs,
  useIdempotency,
} from '../../src/graphql/index.js';
import { createGuard } from '../../src/index.js';
import type { SqliteDatabase } from '../../src/sqlite/index.js';
import { hashKey } from '../../src/store/index.js';
import { sqlitePayments } from './sqlite.js';
import { deferred, gql } from './support.js';

type Context = Record<string, unknown> & { idempotency?: IdempotencyContext<SqliteDatabase> };

function server(resolvers: IResolvers<unknown, Context>) {
  const sqlite = sqlitePayments();
  const guard = createGuard({ store: sqlite.store });
  const yoga = createYoga<Record<string, unknown>>({
    schema: createSchema<Context>({
      typeDefs: /* GraphQL */ `
        ${idempotentDirectiveTypeDefs}
        type Query { ok: Int }
        type Receipt { id: Int! fail: Int! late: Int }
        type Mutation { pay: Receipt! @idempotent }
      `,
      resolvers,
    }),
    plugins: [useIdempotency({ guard, scope: () => 'acct_1' })],
    logging: false,
  });
  return { ...sqlite, yoga };
}

describe('context.idempotency (SPEC S8)', () => {
  it('S8: a resolver finds tx, key, keyHash and scope, typed like tRPC', async () => {
    let seen: IdempotencyContext<SqliteDatabase> | undefined;
    const { yoga, db } = server({
      Mutation: {
        pay: (_: unknown, __: unknown, context: Context) => {
          seen = context.idempotency;
          return { id: 1, fail: 1 };
        },
      },
    });
    const response = await gql(yoga, { query: 'mutation { pay { id } }', key: 'k-ctx' });
    expect(response.status).toBe(200);
    expect(seen).toEqual({ tx: db, key: 'k-ctx', keyHash: hashKey('k-ctx'), scope: 'acct_1' });
    expectTypeOf<IdempotencyContext<SqliteDatabase>>().toEqualTypeOf<{
      tx: SqliteDatabase;
      key: string;
      keyHash: string;
      scope: string;
    }>();
  });

  it('S8: a resolver still running after the answer finds no context.idempotency', async () => {
    const late = deferred();
    let afterAnswer: unknown = 'not read';
    const { yoga } = server({
      Mutation: { pay: () => ({ id: 1 }) },
      Receipt: {
        // A non-null field that fails ends the operation while its sibling still runs.
        fail: async () => {
          throw new Error('fails first');
        },
        late: async (_: unknown, __: unknown, context: Context) => {
          await late.promise;
          afterAnswer = context.idempotency;
          return 1;
        },
      },
    });
    const response = await gql(yoga, { query: 'mutation { pay { late fail } }', key: 'k-late' });
    expect(response.body.data).toBeNull();
    late.resolve();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(afterAnswer).toBeUndefined();
  });
});
