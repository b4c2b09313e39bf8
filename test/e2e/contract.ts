/**
 * The payments service's promises (README "Quick start"), checked over real HTTP against a
 * running service (a child process). Shared by the SQLite and the Postgres suites; names
 * cite the rules of docs/contract.md.
 *
 * The service runs with PAYMENT_LATENCY_MS (see LATENCY_MS) so that duplicates meet a
 * payment in flight.
 */
import { expect, it } from 'vitest';
import {
  graphql,
  listPayments,
  newAccount,
  newKey,
  type Raw,
  sleep,
  trpcCreate,
  validInput,
} from './http.js';

export const LATENCY_MS = 300;

export interface Target {
  dialect: 'sqlite' | 'postgres';
  /** The running service; read when a test runs (it starts in beforeAll). */
  service(): { url: string; banner: string };
  /** Every account a test uses, for clean-up on a shared database. */
  accounts: string[];
}

export function serviceContract(target: Target): void {
  const url = () => target.service().url;
  const account = () => newAccount(target.accounts);
  const created = (r: Raw) => r.json?.data?.createPayment ?? r.json?.result?.data;
  const gqlCode = (r: Raw) => r.json?.errors?.[0]?.extensions?.code;

  it('serves GET /health with 200 and names its store in the start-up line', async () => {
    const response = await fetch(`${url()}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
    expect(target.service().banner).toMatch(target.dialect === 'sqlite' ? /SQLite/ : /Postgres/);
  });

  it('S9: GraphQL replays a retry with the same body and Idempotent-Replayed: true', async () => {
    const acct = account();
    const variables = { input: { ...validInput(), idempotencyKey: newKey() } }; // S1: input key
    const first = await graphql(url(), { account: acct, variables });
    const retry = await graphql(url(), { account: acct, variables });

    expect(first.status).toBe(200);
    expect(created(first)).toMatchObject({ amount: 1299, currency: 'EUR', customerId: 'cus_42' });
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.text).toBe(first.text);
    expect(await listPayments(url(), acct)).toEqual([created(first)]);
  });

  it('S9: tRPC replays a retry with the same body and Idempotent-Replayed: true', async () => {
    const acct = account();
    const input = { ...validInput(), idempotencyKey: newKey() };
    const first = await trpcCreate(url(), { account: acct, input });
    const retry = await trpcCreate(url(), { account: acct, input });

    expect(first.status).toBe(200);
    expect(created(first)).toMatchObject({ amount: 1299, currency: 'EUR', customerId: 'cus_42' });
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.text).toBe(first.text);
    expect(await listPayments(url(), acct)).toEqual([created(first)]);
  });

  for (const surface of ['graphql', 'trpc'] as const) {
    it(`S7/S8/S10: 30 concurrent duplicates on ${surface} store exactly one payment`, async () => {
      const acct = account();
      const key = newKey();
      const send = () =>
        surface === 'graphql'
          ? graphql(url(), { account: acct, key, variables: { input: validInput() } })
          : trpcCreate(url(), { account: acct, key, input: validInput() });
      const answers = await Promise.all(Array.from({ length: 30 }, send));

      const ok = answers.filter((a) => a.status === 200);
      const fresh = ok.filter((a) => a.headers.get('idempotent-replayed') !== 'true');
      const inUse = answers.filter((a) => a.status === 409);
      expect(ok.length + inUse.length).toBe(30); // nothing else: no 5xx, no 422
      expect(fresh).toHaveLength(1);
      for (const answer of ok) expect(answer.text).toBe(fresh[0]!.text);
      for (const answer of inUse) expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
      const stored = await listPayments(url(), acct);
      expect(stored).toEqual([created(fresh[0]!)]);
    });
  }

  it('S10: a duplicate arriving mid-flight gets 409 IDEMPOTENCY_KEY_IN_USE with Retry-After (SQLite may queue it and replay)', async () => {
    const acct = account();
    const key = newKey();
    const send = () => graphql(url(), { account: acct, key, variables: { input: validInput() } });
    const first = send();
    await sleep(LATENCY_MS / 3); // the first is now inside its transaction
    const [a, b] = await Promise.all([first, send()]);
    const answers = [a, b];
    const fresh = answers.find((r) => r.status === 200 && !r.headers.get('idempotent-replayed'));
    const other = answers.find((r) => r !== fresh)!;

    expect(fresh, 'one request ran the payment').toBeDefined();
    if (target.dialect === 'postgres' || other.status === 409) {
      expect(other.status).toBe(409);
      expect(gqlCode(other)).toBe('IDEMPOTENCY_KEY_IN_USE');
      expect(other.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    } else {
      // S23: the SQLite store serialises work on its one connection; a duplicate may wait
      // for the first to finish and then replay it.
      expect(other.status).toBe(200);
      expect(other.headers.get('idempotent-replayed')).toBe('true');
      expect(other.text).toBe(fresh!.text);
    }
    // After the first finished, a retry replays it (S9).
    const retry = await send();
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.text).toBe(fresh!.text);
    expect(await listPayments(url(), acct)).toHaveLength(1);
  });

  it('S6: the same key with a changed input is 422 IDEMPOTENCY_KEY_REUSED on both surfaces, first payment untouched', async () => {
    const acct = account();
    const key = newKey();
    const first = await graphql(url(), { account: acct, key, variables: { input: validInput() } });
    const changed = await graphql(url(), {
      account: acct,
      key,
      variables: { input: validInput({ amount: 5000 }) },
    });
    const trpcKey = newKey();
    const trpcFirst = await trpcCreate(url(), { account: acct, key: trpcKey, input: validInput() });
    const trpcChanged = await trpcCreate(url(), {
      account: acct,
      key: trpcKey,
      input: validInput({ currency: 'USD' }),
    });

    expect(first.status).toBe(200);
    expect(changed.status).toBe(422);
    expect(gqlCode(changed)).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(trpcFirst.status).toBe(200);
    expect(trpcChanged.status).toBe(422);
    expect(trpcChanged.json.error.data).toMatchObject({
      code: 'UNPROCESSABLE_CONTENT',
      idempotencyCode: 'IDEMPOTENCY_KEY_REUSED',
    });
    const stored = await listPayments(url(), acct);
    expect(stored.map((p) => [p.amount, p.id])).toEqual([
      [1299, created(first).id],
      [1299, created(trpcFirst).id],
    ]);
  });

  it('S13: a mutation without Authorization is 401 before the guard, so its key stays free', async () => {
    const acct = account();
    const key = newKey();
    const input = validInput();
    const gql = await graphql(url(), { key, variables: { input } });
    const trpc = await trpcCreate(url(), { key, input: { ...input, idempotencyKey: key } });
    const basic = await graphql(url(), { key, variables: { input }, authorization: 'Basic YTpi' });

    expect(gql.status).toBe(401);
    expect(gqlCode(gql)).toBe('UNAUTHENTICATED');
    expect(trpc.status).toBe(401);
    expect(trpc.json.error.data.code).toBe('UNAUTHORIZED');
    expect(basic.status).toBe(401);
    // The key was never claimed: with an account, the same key runs afresh.
    const authed = await graphql(url(), { account: acct, key, variables: { input } });
    expect(authed.status).toBe(200);
    expect(authed.headers.get('idempotent-replayed')).toBeNull();
    expect(await listPayments(url(), acct)).toHaveLength(1);
  });

  it('S12/S13: invalid payment input is a 400 on both surfaces, nothing is stored, and the key is free for the corrected request', async () => {
    const acct = account();
    const gqlKey = newKey();
    const trpcKey = newKey();
    const invalid = [
      validInput({ amount: -5 }),
      validInput({ amount: 0 }),
      validInput({ currency: 'eur' }),
      validInput({ currency: 'EURO' }),
      validInput({ customerId: '' }),
    ];
    for (const input of invalid) {
      const gql = await graphql(url(), { account: acct, key: gqlKey, variables: { input } });
      expect(gql.status, gql.text).toBe(400);
      expect(gqlCode(gql)).toBe('BAD_USER_INPUT');
      const trpc = await trpcCreate(url(), { account: acct, key: trpcKey, input });
      expect(trpc.status, trpc.text).toBe(400);
      expect(trpc.json.error.data.code).toBe('BAD_REQUEST');
    }
    // GraphQL's own type checks are 400 too, for clients that accept only application/json.
    const literal = await graphql(url(), {
      account: acct,
      key: gqlKey,
      query:
        'mutation { createPayment(input: { amount: 1.5, currency: "EUR", customerId: "c" }) { id } }',
    });
    expect(literal.status, literal.text).toBe(400);
    const fractional = await trpcCreate(url(), {
      account: acct,
      key: trpcKey,
      input: validInput({ amount: 1.5 }),
    });
    expect(fractional.status).toBe(400);
    expect(await listPayments(url(), acct)).toEqual([]);

    // Nothing was stored under the keys: corrected requests run (not 422, not a replay).
    const gql = await graphql(url(), {
      account: acct,
      key: gqlKey,
      variables: { input: validInput() },
    });
    const trpc = await trpcCreate(url(), { account: acct, key: trpcKey, input: validInput() });
    for (const answer of [gql, trpc]) {
      expect(answer.status, answer.text).toBe(200);
      expect(answer.headers.get('idempotent-replayed')).toBeNull();
    }
    expect(await listPayments(url(), acct)).toHaveLength(2);
  });

  it('S2/S3: malformed or missing keys are 400 on both surfaces and nothing runs', async () => {
    const acct = account();
    const input = validInput();
    const cases: [string | undefined, string][] = [
      [undefined, 'IDEMPOTENCY_KEY_MISSING'],
      ['x'.repeat(256), 'IDEMPOTENCY_KEY_INVALID'],
      ['has space', 'IDEMPOTENCY_KEY_INVALID'],
      ['', 'IDEMPOTENCY_KEY_INVALID'],
    ];
    for (const [key, code] of cases) {
      const keyed = key === undefined ? input : { ...input, idempotencyKey: key };
      const gql = await graphql(url(), { account: acct, variables: { input: keyed } });
      expect(gql.status, `${JSON.stringify(key)}: ${gql.text}`).toBe(400);
      expect(gqlCode(gql)).toBe(code);
      const trpc = await trpcCreate(url(), { account: acct, input: keyed });
      expect(trpc.status, `${JSON.stringify(key)}: ${trpc.text}`).toBe(400);
      expect(trpc.json.error.data).toMatchObject({ code: 'BAD_REQUEST', idempotencyCode: code });
    }
    // S1: two sources that disagree.
    const both = await graphql(url(), {
      account: acct,
      key: 'header-key',
      variables: { input: { ...input, idempotencyKey: 'input-key' } },
    });
    expect(both.status).toBe(400);
    expect(gqlCode(both)).toBe('IDEMPOTENCY_KEY_INVALID');
    expect(await listPayments(url(), acct)).toEqual([]);
  });

  it('S4: the same key in two accounts makes two payments, one each', async () => {
    const alice = account();
    const bob = account();
    const key = newKey();
    const a = await trpcCreate(url(), { account: alice, key, input: validInput() });
    const b = await trpcCreate(url(), { account: bob, key, input: validInput() });

    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(created(a).id).not.toBe(created(b).id);
    expect(await listPayments(url(), alice)).toEqual([created(a)]);
    expect(await listPayments(url(), bob)).toEqual([created(b)]);
  });

  it('S21: CORS lets browsers send Idempotency-Key and read Idempotent-Replayed', async () => {
    for (const path of ['/graphql', '/trpc/payments.create']) {
      const preflight = await fetch(`${url()}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'http://app.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type, authorization, idempotency-key',
        },
      });
      expect(preflight.status, path).toBeLessThan(300);
      expect(preflight.headers.get('access-control-allow-origin')).toBeTruthy();
      expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain(
        'idempotency-key',
      );
    }
    const acct = account();
    const answer = await trpcCreate(url(), {
      account: acct,
      key: newKey(),
      input: validInput(),
    });
    expect(answer.headers.get('access-control-expose-headers')).toContain('Idempotent-Replayed');
  });
}
