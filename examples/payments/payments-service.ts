/**
 * What creating and listing payments means, written once for both surfaces and both
 * dialects. Input arrives already validated (payment.ts); the transaction comes from the guard.
 */
import { newPayment, type Payment, type PaymentInput } from './payment.js';
import type { PaymentsRepository } from './payments-repository.js';

export interface PaymentsService<Tx> {
  /** Inserts the payment through `tx` and "charges the card"; runs inside the guard. */
  create(tx: Tx, accountId: string, input: PaymentInput): Promise<Payment>;
  list(accountId: string): Promise<Payment[]>;
}

export function paymentsService<Tx>(
  repository: PaymentsRepository<Tx>,
  options: { latencyMs: number },
): PaymentsService<Tx> {
  return {
    async create(tx, accountId, input) {
      const payment = newPayment(input);
      await repository.insert(tx, accountId, payment);
      // PAYMENT_LATENCY_MS: a card processor's round trip, after the insert and before the
      // answer, with the transaction and the idempotency claim held, so that retries and
      // duplicates arrive while the first attempt is still in flight.
      if (options.latencyMs > 0) await sleep(options.latencyMs);
      return payment;
    },
    list: (accountId) => repository.list(accountId),
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
