/**
 * A key the caller set itself is the intent's key (SPEC S28), written once and run for each
 * client: one set as an `Idempotency-Key` header (in any letter case, in whatever shape the
 * client takes headers) goes out unchanged on the first attempt and on every retry, and one
 * the server would refuse (S2) is refused by the client before anything is sent.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RetryOptions } from '../../src/client/index.js';
import { listPayments } from '../e2e/http.js';
import type { Exchange, Fault } from '../support/http-fault-proxy.js';
import {
  exchangesOf,
  keyOf,
  type Paid,
  type PayArgs,
  type PaymentInput,
  type PayThrough,
  paymentIn,
} from './contract.js';
import { type Service, startService } from './service.js';

const RETRY: RetryOptions = { attempts: 6, baseDelayMs: 40, maxDelayMs: 400, deadlineMs: 15_000 };

/**
 * Each intent's attempts in turn: a cut while the service runs it (so the next one meets
 * the key in flight, a 409), a 503 from a gateway, an answer dropped after the commit.
 */
const FAULTS: Fault[] = [
  { kind: 'cut-in-flight' },
  { kind: 'pass' },
  { kind: 'unavailable' },
  { kind: 'drop-response' },
];

/** Keys the server refuses (S2): a space, too long, not ASCII, a broken quoted string, empty. */
export const INVALID_KEYS = ['order 45', 'k'.repeat(256), 'café-45', '"order-45', ''];

/** How a client's answer says the call was refused for its key, before anything was sent. */
export function refusedForItsKey(error: unknown): boolean {
  const seen = new Set<unknown>();
  const visit = (value: unknown): boolean => {
    if (value === null || typeof value !== 'object' || seen.has(value)) return false;
    seen.add(value);
    const { code, message, cause, networkError } = value as Record<string, unknown>;
    if (code === 'IDEMPOTENCY_KEY_INVALID' && typeof message === 'string') {
      return /idempotency key/i.test(message) && /nothing was sent/i.test(message);
    }
    return visit(cause) || visit(networkError);
  };
  return visit(error);
}

/**
 * Where a client takes a key its caller set: an `Idempotency-Key` header, or an option
 * (Apollo's and urql's `context.idempotencyKey`, the tRPC input's `idempotencyKey`).
 */
export type KeyWay = 'header' | 'option';

export function callerKeyContract(title: string, pay: PayThrough, ways: readonly KeyWay[]): void {
  describe(title, () => {
    let service: Service;
    beforeAll(async () => {
      service = await startService('sqlite');
    });
    afterAll(() => service?.stop());

    for (const way of ways) {
      it(`S28: a key the caller set as ${WAYS[way]} is sent unchanged on every attempt, through a 409, a 503 and a dropped answer`, async () => {
        const intents = keysSet(way).map((key, i) => ({
          ...key,
          input: intent(`cus_${way}_${i}`),
        }));
        service.proxy.setFaults((request) => {
          const mine = intents.find((it) => request.body.includes(it.input.customerId));
          if (!mine) return { kind: 'pass' };
          return FAULTS[exchangesOf(service, mine.input.customerId).length] ?? { kind: 'pass' };
        });
        const account = `acct_${way}_${hex()}`;

        // One after another: SQLite runs one write at a time, so a retry that waited behind
        // another intent's write would find its own first attempt finished, not in flight.
        const paid: Paid[] = [];
        for (const { args, input } of intents) {
          paid.push(await pay(service.proxy.url, { account, input, retry: RETRY, ...args }));
        }

        intents.forEach(({ sent, input }, i) => {
          const log = exchangesOf(service, input.customerId);
          const summary = JSON.stringify(
            log.map((e) => [e.fault, e.status, e.at - log[0]!.at, e.replayed]),
          );
          expect(log.map(way === 'header' ? rawKeyHeader : keyOf), summary).toEqual(
            log.map(() => sent),
          );
          expect(
            log.some((e) => e.status === 409 && e.delivered),
            summary,
          ).toBe(true);
          expect(
            log.some((e) => e.status === 503 && e.delivered),
            summary,
          ).toBe(true);
          const dropped = log.some((e) => e.fault === 'drop-response' && e.status === 200);
          expect(dropped, summary).toBe(true);
          const result = paid[i]!;
          expect(result, summary).toMatchObject({ ok: true, replayed: true });
          const fresh = log.filter((e) => e.status === 200 && !e.replayed);
          expect(fresh).toHaveLength(1);
          if (result.ok) expect(result.payment).toEqual(paymentIn(fresh[0]!));
        });
        expect(await listPayments(service.direct, account)).toHaveLength(intents.length);
      });

      it(`S2: a key set as ${WAYS[way]} that the server would refuse is refused by the client, and nothing is sent`, async () => {
        service.proxy.setFaults(() => ({ kind: 'pass' }));
        const account = `acct_bad_${way}_${hex()}`;
        for (const key of REFUSED[way]) {
          const input = intent(`cus_bad_${way}`);
          const args = way === 'header' ? { headers: [['Idempotency-Key', key]] } : { key };
          const paid = await pay(service.proxy.url, {
            account,
            input,
            retry: RETRY,
            ...(args as Partial<PayArgs>),
          });
          expect(paid.ok, String(key)).toBe(false);
          if (!paid.ok) expect(refusedForItsKey(paid.error), `${key}: ${paid.error}`).toBe(true);
          expect(exchangesOf(service, input.customerId), String(key)).toEqual([]);
        }
      });
    }
  });
}

const WAYS: Record<KeyWay, string> = {
  header: 'an Idempotency-Key header (any letter case)',
  option: 'an option',
};

/** Fresh keys set each way (`args`), and what each request must carry (`sent`). */
function keysSet(way: KeyWay): { args: Partial<PayArgs>; sent: string }[] {
  if (way === 'option') {
    const key = `order-${hex()}`;
    return [{ args: { key }, sent: key }];
  }
  const header = (name: string, value: string) => ({
    args: { headers: [[name, value]] },
    sent: value,
  });
  return [
    header('Idempotency-Key', `order-${hex()}`),
    header('idempotency-key', `order-${hex()}`),
    // RFC 8941's quoted form, which the server unquotes: sent as written.
    header('IDEMPOTENCY-KEY', `"order-${hex()}"`),
  ] as { args: Partial<PayArgs>; sent: string }[];
}

/**
 * Keys each way must refuse (S2). Options leave out the broken quoted string: the tRPC input
 * takes it as a valid key.
 */
const REFUSED: Record<KeyWay, unknown[]> = {
  header: INVALID_KEYS,
  option: [45, ...INVALID_KEYS.filter((key) => !key.startsWith('"'))],
};

/** The `Idempotency-Key` header exactly as it arrived. */
function rawKeyHeader(exchange: Exchange): string | undefined {
  const value = exchange.request.headers['idempotency-key'];
  return typeof value === 'string' ? value : undefined;
}

let counter = 0;
function intent(name: string): PaymentInput {
  counter += 1;
  return { amount: 4502, currency: 'EUR', customerId: `${name}_${counter}_${hex()}` };
}

function hex(): string {
  return randomBytes(4).toString('hex');
}
