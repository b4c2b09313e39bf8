import { TRPCClientError } from '@trpc/client';
import { initTRPC } from '@trpc/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { idempotency } from '../../src/trpc/index.js';
import { createApp } from './app.js';
import { connect, rawMutation, type Served, serve } from './server.js';
import { sqliteGuard } from './sqlite.js';

const { guard, ledger } = sqliteGuard();
const app = createApp(guard, ledger);
let served: Served;
beforeAll(async () => {
  served = await serve(app.router);
});
afterAll(() => served.close());

/** The rejection of a client call, as the TRPCClientError a user would catch. */
async function rejection(call: Promise<unknown>) {
  const error = await call.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(TRPCClientError);
  return error as TRPCClientError<typeof app.router>;
}

describe('keys (SPEC S1-S3)', () => {
  it('S3: a guarded mutation without a key is 400 IDEMPOTENCY_KEY_MISSING and does not run', async () => {
    const before = app.runs.pay;
    const error = await rejection(connect(served.url).trpc.pay.mutate({ amount: 1 }));

    expect(error.data?.httpStatus).toBe(400);
    expect(error.data?.code).toBe('BAD_REQUEST');
    expect(error.data?.idempotencyCode).toBe('IDEMPOTENCY_KEY_MISSING');
    expect(app.runs.pay).toBe(before);
  });

  it.each([
    ['too long', 'k'.repeat(256)],
    ['a space', 'two words'],
    ['non-ASCII', 'schlüssel'],
    ['an unterminated sf-string', '"abc'],
  ])('S2: a header key with %s is 400 IDEMPOTENCY_KEY_INVALID and does not run', async (_, key) => {
    const before = app.runs.pay;
    const response = await rawMutation(
      served.url,
      'pay',
      { amount: 1 },
      { 'Idempotency-Key': key },
    );
    const body = (await response.json()) as { error: { json: { data: Record<string, unknown> } } };

    expect(response.status).toBe(400);
    expect(body.error.json.data.idempotencyCode).toBe('IDEMPOTENCY_KEY_INVALID');
    expect(app.runs.pay).toBe(before);
  });

  it('S2: an empty input key is 400 IDEMPOTENCY_KEY_INVALID', async () => {
    const error = await rejection(
      connect(served.url).trpc.pay.mutate({ amount: 1, idempotencyKey: '' }),
    );
    expect(error.data?.idempotencyCode).toBe('IDEMPOTENCY_KEY_INVALID');
  });

  it('S2: an RFC 8941 quoted header key is the same key as its bare form', async () => {
    const quoted = connect(served.url, { headers: () => ({ 'Idempotency-Key': '"k-quoted"' }) });
    const before = app.runs.pay;
    const first = await quoted.trpc.pay.mutate({ amount: 2 });
    const second = await connect(served.url).trpc.pay.mutate({
      amount: 2,
      idempotencyKey: 'k-quoted',
    });

    expect(second).toEqual(first);
    expect(app.runs.pay).toBe(before + 1);
  });

  it('S1: header and input keys that agree are one key; that disagree are 400 and nothing runs', async () => {
    const client = connect(served.url, { headers: () => ({ 'Idempotency-Key': 'k-both' }) });
    const before = app.runs.pay;
    await client.trpc.pay.mutate({ amount: 4, idempotencyKey: 'k-both' });
    const error = await rejection(client.trpc.pay.mutate({ amount: 4, idempotencyKey: 'k-other' }));

    expect(error.data?.httpStatus).toBe(400);
    expect(error.data?.idempotencyCode).toBe('IDEMPOTENCY_KEY_INVALID');
    expect(app.runs.pay).toBe(before + 1);
  });

  it('S3: with required: false a mutation without a key runs unguarded, and with one is guarded', async () => {
    const { trpc } = connect(served.url);
    const unguarded = await trpc.optional.mutate({ amount: 1 });
    const guardedRun = await trpc.optional.mutate({ amount: 1, idempotencyKey: 'k-optional' });
    const replay = await trpc.optional.mutate({ amount: 1, idempotencyKey: 'k-optional' });

    expect(unguarded.guarded).toBe(false);
    expect(guardedRun.guarded).toBe(true);
    expect(replay).toEqual(guardedRun);
  });

  it('S1: createCaller (no headers) takes the key from the input, or from the context', async () => {
    const caller = app.t.createCallerFactory(app.router)({ userId: 'server' });
    const before = app.runs.pay;
    const first = await caller.pay({ amount: 5, idempotencyKey: 'k-caller' });
    const again = await caller.pay({ amount: 5, idempotencyKey: 'k-caller' });
    const keyed = app.t.createCallerFactory(app.router)({
      userId: 'server',
      idempotencyKey: 'k-ctx',
    });
    const fromContext = await keyed.pay({ amount: 5 });
    const fromContextAgain = await keyed.pay({ amount: 5 });

    expect(again).toEqual(first);
    expect(fromContextAgain).toEqual(fromContext);
    expect(app.runs.pay).toBe(before + 2);
    await expect(caller.pay({ amount: 5 })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });
});

describe('where keys are read: the keyHeader and serverKey options (SPEC S1)', () => {
  interface CustomContext {
    userId: string;
    /** A context that keeps the request's headers where the default reader does not look. */
    incoming: { key?: string };
    /** A key the server supplies, not at `ctx.idempotencyKey`. */
    jobId?: string;
  }
  const t = initTRPC.context<CustomContext>().create();
  let runs = 0;
  const router = t.router({
    pay: t.procedure
      .input(z.object({ amount: z.number() }))
      .concat(
        idempotency({
          guard,
          scope: (ctx: CustomContext) => ctx.userId,
          keyHeader: (ctx) => ctx.incoming.key,
          serverKey: (ctx) => ctx.jobId,
        }),
      )
      .mutation(() => ++runs),
  });
  const pay = (ctx: Omit<CustomContext, 'userId'>) =>
    t
      .createCallerFactory(router)({ userId: 'u-options', ...ctx })
      .pay({ amount: 1 });

  it('S1: a key from keyHeader(ctx), or from serverKey(ctx), guards the call; two that differ are 400 and nothing runs', async () => {
    const fromHeader = await pay({ incoming: { key: 'k-opt-header' } });
    const headerAgain = await pay({ incoming: { key: 'k-opt-header' } });
    const fromServer = await pay({ incoming: {}, jobId: 'k-opt-server' });
    const serverAgain = await pay({ incoming: {}, jobId: 'k-opt-server' });
    const disagree = await pay({ incoming: { key: 'k-opt-a' }, jobId: 'k-opt-b' }).catch(
      (error: unknown) => error,
    );

    expect([fromHeader, headerAgain, fromServer, serverAgain]).toEqual([1, 1, 2, 2]);
    expect(disagree).toMatchObject({ code: 'BAD_REQUEST', message: /header and the context/ });
    await expect(pay({ incoming: {} })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    expect(runs).toBe(2);
  });
});

describe('scope and fingerprint (SPEC S4, S6)', () => {
  it('S4: the same key from two users runs twice and never replays across them', async () => {
    const alice = connect(served.url, { headers: () => ({ 'x-user': 'alice' }) }).trpc;
    const bob = connect(served.url, { headers: () => ({ 'x-user': 'bob' }) }).trpc;
    const before = app.runs.pay;
    const forAlice = await alice.pay.mutate({ amount: 9, idempotencyKey: 'k-shared' });
    const forBob = await bob.pay.mutate({ amount: 9, idempotencyKey: 'k-shared' });

    expect(app.runs.pay).toBe(before + 2);
    expect(forBob.run).not.toBe(forAlice.run);
  });

  it('S4: without a scope option, one warning at creation and one global scope', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const { idempotency } = await import('../../src/trpc/index.js');
      idempotency({ guard });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/global scope/);
    } finally {
      warn.mockRestore();
    }
  });

  it('S6: the same key with a different input is 422 IDEMPOTENCY_KEY_REUSED and does not run', async () => {
    const { trpc } = connect(served.url);
    await trpc.pay.mutate({ amount: 10, idempotencyKey: 'k-reused' });
    const before = app.runs.pay;
    const error = await rejection(trpc.pay.mutate({ amount: 11, idempotencyKey: 'k-reused' }));

    expect(error.data?.httpStatus).toBe(422);
    expect(error.data?.code).toBe('UNPROCESSABLE_CONTENT');
    expect(error.data?.idempotencyCode).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(app.runs.pay).toBe(before);
  });

  it('S6: the same key and input on a different procedure is 422', async () => {
    const { trpc } = connect(served.url);
    await trpc.pay.mutate({ amount: 12, idempotencyKey: 'k-path' });
    const error = await rejection(trpc.refund.mutate({ amount: 12, idempotencyKey: 'k-path' }));

    expect(error.data?.httpStatus).toBe(422);
    expect(app.runs.refund).toBe(0);
  });

  it('S5: the fingerprint is over the validated input: a field the schema strips does not change it', async () => {
    const first = await rawMutation(served.url, 'pay', { amount: 13, idempotencyKey: 'k-strip' });
    const second = await rawMutation(served.url, 'pay', {
      amount: 13,
      idempotencyKey: 'k-strip',
      ignored: 'stripped by zod',
    });

    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('setup', () => {
  it('S5: concatenated before .input(), the raw input is fingerprinted (key still excluded)', async () => {
    const replay = await rawMutation(
      served.url,
      'early',
      { amount: 14 },
      { 'Idempotency-Key': 'k-early' },
    );
    const same = await rawMutation(served.url, 'early', { amount: 14, idempotencyKey: 'k-early' });
    const extra = await rawMutation(served.url, 'early', {
      amount: 14,
      idempotencyKey: 'k-early',
      ignored: 1,
    });

    expect(replay.status).toBe(200);
    expect(same.headers.get('idempotent-replayed')).toBe('true');
    expect(extra.status).toBe(422);
  });

  it('setup: a query opted in is an error naming the procedure, not a silent no-op (S17: queries are never guarded)', async () => {
    const error = await rejection(connect(served.url).trpc.lookup.query());
    expect(error.data?.code).toBe('INTERNAL_SERVER_ERROR');
    expect(error.message).toMatch(/guards mutations only.*"lookup"/);
  });
});
