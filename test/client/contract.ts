/**
 * What every client helper must do against the payments demo behind the fault proxy (SPEC
 * S28, S29), written once and run for each client. A client under test is an adapter that
 * pays one intent and says what its caller saw.
 *
 * Intents are told apart by their customerId, unique per intent, so that the proxy's log
 * shows every attempt of each intent and the key it carried.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RetryOptions } from '../../src/client/index.js';
import { listPayments } from '../e2e/http.js';
import type { Exchange, Fault, SeenRequest } from '../support/http-fault-proxy.js';
import { postgresAvailability } from '../support/postgres.js';
import { type Service, startService } from './service.js';

export interface PaymentInput {
  amount: number;
  currency: string;
  customerId: string;
}

export interface Payment extends PaymentInput {
  id: string;
  createdAt: string;
}

export type Paid =
  | { ok: true; payment: Payment; replayed: boolean }
  | { ok: false; status: number | undefined; error: unknown };

export interface PayArgs {
  account: string;
  input: PaymentInput;
  /** The caller's own key for this intent; the client makes one when absent. */
  key?: string;
  /**
   * Headers the caller sets on this call itself, where its client takes them (its own
   * `Idempotency-Key` among them, in any letter case).
   */
  headers?: [name: string, value: string][];
  signal?: AbortSignal;
  retry: RetryOptions;
}

/** Pays one intent through the client under test, at `url` (the proxy). */
export type PayThrough = (url: string, args: PayArgs) => Promise<Paid>;

/** Fast retries for tests; attempts enough to outlast two faults in a row. */
const RETRY: RetryOptions = { attempts: 6, baseDelayMs: 40, maxDelayMs: 400, deadlineMs: 15_000 };
const INTENTS = 16;

const pg = await postgresAvailability();

export function clientContract(name: string, pay: PayThrough): void {
  for (const dialect of ['sqlite', 'postgres'] as const) {
    const skip = dialect === 'postgres' && !pg.realPostgres;
    describe.skipIf(skip)(`${name} on ${dialect}${skip ? ` (${pg.skipReason})` : ''}`, () => {
      let service: Service;
      beforeAll(async () => {
        service = await startService(dialect);
      });
      afterAll(() => service?.stop());
      contract(() => service, pay);
    });
  }
}

function contract(service: () => Service, pay: PayThrough): void {
  const account = () => {
    const id = `acct_client_${randomBytes(6).toString('hex')}`;
    service().accounts.push(id);
    return id;
  };
  const through = (args: Omit<PayArgs, 'retry'> & { retry?: RetryOptions }) =>
    pay(service().proxy.url, { retry: RETRY, ...args });

  it('S28/S29: intents in parallel through dropped answers, resets, cuts and delays make one payment each, and every caller gets the first answer', async () => {
    const acct = account();
    const intents = Array.from({ length: INTENTS }, (_, i) => input(`cus_${i}`));
    // Each intent's first attempt meets one fault, in turn; a later attempt sometimes
    // meets another (a dropped answer or a reset), drawn at random.
    const firsts: Fault[] = [
      { kind: 'drop-response' },
      { kind: 'reset' },
      { kind: 'cut-in-flight' },
      { kind: 'delay', ms: 150 },
      { kind: 'pass' },
    ];
    const faultOf = new Map(intents.map((intent, i) => [intent.customerId, firsts[i % 5]!]));
    service().proxy.setFaults((request) => {
      const intent = customerOf(request);
      const fault = intent === undefined ? undefined : faultOf.get(intent);
      if (intent === undefined || fault === undefined) return { kind: 'pass' };
      const attempt = exchangesOf(service(), intent).length; // this one is not logged yet
      if (attempt === 0) return fault;
      const roll = Math.random();
      if (attempt <= 2 && roll < 0.15) return { kind: 'drop-response' };
      if (attempt <= 2 && roll < 0.25) return { kind: 'reset' };
      return { kind: 'pass' };
    });

    const paid = await Promise.all(
      intents.map((intent) => through({ account: acct, input: intent })),
    );

    const failed = paid.filter((p) => !p.ok);
    expect(failed, JSON.stringify(failed)).toEqual([]);
    const stored = await listPayments(service().direct, acct);
    expect(stored).toHaveLength(INTENTS);
    const keys = new Set<string>();
    paid.forEach((result, i) => {
      if (!result.ok) throw new Error('unreachable');
      const log = exchangesOf(service(), intents[i]!.customerId);
      // S28: one key per intent, the same on every attempt, and no two intents share one.
      const keysSent = new Set(log.map((e) => keyOf(e) ?? ''));
      expect(keysSent.size).toBe(1);
      const [key] = keysSent;
      expect(key).toBeTruthy();
      expect(keys.has(key!)).toBe(false);
      keys.add(key!);
      // The first answer the service gave, delivered or not, is what the caller got.
      const fresh = log.filter((e) => e.status === 200 && !e.replayed);
      expect(fresh).toHaveLength(1);
      expect(result.payment).toEqual(paymentIn(fresh[0]!));
      // Replayed exactly where the service replayed the answer the caller received.
      const received = log.filter((e) => e.delivered).at(-1)!;
      expect(result.replayed).toBe(received.replayed);
    });
    const all = intents.flatMap((intent) => exchangesOf(service(), intent.customerId));
    // Every fault happened, and some callers saw replays while others did not.
    for (const kind of ['drop-response', 'reset', 'cut-in-flight', 'delay'] as const) {
      expect(all.some((e) => e.fault === kind)).toBe(true);
    }
    expect(paid.some((p) => p.ok && p.replayed)).toBe(true);
    expect(paid.some((p) => p.ok && !p.replayed)).toBe(true);
  });

  it('S10/S29: a 409 IDEMPOTENCY_KEY_IN_USE is waited out for its Retry-After, then the first answer comes', async () => {
    const acct = account();
    const intent = input('cus_409');
    service().proxy.setFaults((request) =>
      customerOf(request) === intent.customerId &&
      exchangesOf(service(), intent.customerId).length === 0
        ? { kind: 'cut-in-flight' }
        : { kind: 'pass' },
    );
    const result = await through({ account: acct, input: intent });

    const log = exchangesOf(service(), intent.customerId);
    const conflict = log.findIndex((e) => e.status === 409 && e.delivered);
    expect(conflict, JSON.stringify(log.map((e) => [e.fault, e.status]))).toBeGreaterThan(0);
    const next = log[conflict + 1]!;
    const retryAfter = Number(log[conflict]!.headers?.['retry-after']) * 1000;
    expect(retryAfter).toBeGreaterThanOrEqual(1000);
    expect(next.at - log[conflict]!.at).toBeGreaterThanOrEqual(retryAfter - 50);
    expect(result).toMatchObject({ ok: true, replayed: true });
    if (result.ok) expect(result.payment).toEqual(paymentIn(log.find((e) => e.status === 200)!));
    expect(await listPayments(service().direct, acct)).toHaveLength(1);
  });

  it('S28/S29: a key the caller passes is used, and 422 and 400 answers are never retried', async () => {
    const acct = account();
    service().proxy.setFaults(() => ({ kind: 'pass' }));
    const key = `order-${randomBytes(6).toString('hex')}`;
    const own = input('cus_own_key');
    const first = await through({ account: acct, key, input: own });
    expect(first.ok).toBe(true);
    expect(exchangesOf(service(), own.customerId).map(keyOf)).toEqual([key]);

    // S6: the same key for another payment is refused once, and not asked again.
    const other = input('cus_reused', 1);
    const reused = await through({ account: acct, key, input: other });
    expect(reused).toMatchObject({ ok: false, status: 422 });
    expect(exchangesOf(service(), other.customerId)).toHaveLength(1);

    const bad = { ...input('cus_bad'), currency: 'eur' };
    const invalid = await through({ account: acct, input: bad });
    expect(invalid).toMatchObject({ ok: false, status: 400 });
    expect(exchangesOf(service(), bad.customerId)).toHaveLength(1);
    expect(await listPayments(service().direct, acct)).toHaveLength(1);
  });

  it('S29: retries stop at the attempt bound, and an abort stops them at once', async () => {
    const acct = account();
    service().proxy.setFaults((request) =>
      customerOf(request)?.startsWith('cus_unreachable') ? { kind: 'reset' } : { kind: 'pass' },
    );
    const lost = input('cus_unreachable');
    const bounded = await through({ account: acct, input: lost, retry: { ...RETRY, attempts: 3 } });
    expect(bounded.ok).toBe(false);
    expect(exchangesOf(service(), lost.customerId)).toHaveLength(3);

    const controller = new AbortController();
    const slow = { attempts: 50, baseDelayMs: 200, maxDelayMs: 200, deadlineMs: 60_000 };
    const abandoned = input('cus_unreachable');
    const call = through({
      account: acct,
      input: abandoned,
      signal: controller.signal,
      retry: slow,
    });
    let abortedAt = 0;
    setTimeout(() => {
      abortedAt = Date.now();
      controller.abort();
    }, 500);
    const aborted = await call;
    expect(aborted.ok).toBe(false);
    expect(Date.now() - abortedAt).toBeLessThan(300);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const log = exchangesOf(service(), abandoned.customerId);
    expect(log.length).toBeGreaterThan(0);
    // A request already on its way when the abort came may still arrive; none starts later.
    expect(log.filter((e) => e.at > abortedAt + 100)).toEqual([]);
    expect(await listPayments(service().direct, acct)).toHaveLength(0);
  });
}

/** What a GraphQL client library answered: its error, if any, and the answer's extensions. */
export interface LibraryAnswer {
  error?: unknown;
  extensions?: Record<string, unknown>;
}

/**
 * S28 under a GraphQL client library's own retry (Apollo's RetryLink, urql's
 * retryExchange) with our helper inside it at `attempts: 1`: the proxy drops the first two
 * answers, the library retries, and every attempt must carry the first attempt's key.
 * `pay` sends one payment through the library to `url` (the proxy) as `account`.
 */
export function libraryRetryKeepsTheKey(
  title: string,
  pay: (url: string, account: string, input: PaymentInput) => Promise<LibraryAnswer>,
): void {
  it(`S28: ${title}, every retry it makes sends the key of the first attempt`, async () => {
    const service = await startService('sqlite');
    try {
      const intent = `library_retry_${randomBytes(3).toString('hex')}`;
      const account = `acct_${intent}`;
      const paying = { amount: 7, currency: 'EUR', customerId: `cus_${intent}` };
      service.proxy.setFaults(() =>
        exchangesOf(service, paying.customerId).length < 2
          ? { kind: 'drop-response' }
          : { kind: 'pass' },
      );
      const result = await pay(service.proxy.url, account, paying);
      expect(result.error).toBeUndefined();
      const log = exchangesOf(service, paying.customerId);
      expect(log).toHaveLength(3);
      expect(new Set(log.map(keyOf)).size).toBe(1);
      expect(result.extensions?.idempotency).toMatchObject({ replayed: true });
      expect(await listPayments(service.direct, account)).toHaveLength(1);
    } finally {
      await service.stop();
    }
  });
}

let counter = 0;
/** A valid payment input whose customerId names the intent uniquely. */
function input(name: string, amount = 1299): PaymentInput {
  counter += 1;
  return {
    amount,
    currency: 'EUR',
    customerId: `${name}_${counter}_${randomBytes(3).toString('hex')}`,
  };
}

/** The intent a request belongs to: the customerId in a GraphQL or tRPC body. */
export function customerOf(request: SeenRequest): string | undefined {
  const match = /"customerId":"([^"]+)"/.exec(request.body);
  return match?.[1];
}

/** Every request of one intent, in order. */
export function exchangesOf(service: Service, customer: string): Exchange[] {
  return service.proxy.exchanges.filter((e) => customerOf(e.request) === customer);
}

/** The key a request carried: the header, or the tRPC input's `idempotencyKey`. */
export function keyOf(exchange: Exchange): string | undefined {
  const header = exchange.request.headers['idempotency-key'];
  if (typeof header === 'string') return header;
  return /"idempotencyKey":"([^"]+)"/.exec(exchange.request.body)?.[1];
}

/** The payment in a GraphQL or tRPC answer body (without the `__typename` Apollo asks for). */
export function paymentIn(exchange: Exchange): Payment {
  const body = JSON.parse(exchange.body ?? 'null');
  const { __typename: _, ...payment } = body?.data?.createPayment ?? body?.result?.data ?? {};
  return payment;
}
