/**
 * The demo's domain: what a payment is and which inputs are acceptable. Both surfaces
 * (GraphQL and tRPC) validate with the same rules, so both answer 400 for the same inputs.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';

export interface Payment {
  id: string;
  amount: number;
  currency: string;
  customerId: string;
  createdAt: string;
}

export const paymentInputSchema = z.object({
  amount: z
    .number({ error: 'amount must be a number' })
    .int('amount must be a whole number of minor units (cents)')
    .positive('amount must be positive')
    .max(2_147_483_647, 'amount is too large'),
  currency: z
    .string({ error: 'currency must be a string' })
    .regex(/^[A-Z]{3}$/, 'currency must be three capital letters (ISO 4217), such as EUR'),
  customerId: z
    .string({ error: 'customerId must be a string' })
    .trim()
    .min(1, 'customerId must not be empty')
    .max(200, 'customerId is too long'),
});

export type PaymentInput = z.infer<typeof paymentInputSchema>;

/** What went wrong with an input, one message per field, for a 400 answer. */
export class PaymentValidationError extends Error {
  override readonly name = 'PaymentValidationError';
  constructor(readonly issues: { field: string; message: string }[]) {
    super(`Invalid payment: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`);
  }
}

export function validatePaymentInput(input: unknown): PaymentInput {
  const parsed = paymentInputSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw paymentValidationError(parsed.error);
}

/** The same readable error for a failed parse, also for tRPC's own `.input()` validation. */
export function paymentValidationError(error: z.ZodError): PaymentValidationError {
  return new PaymentValidationError(
    error.issues.map((issue) => ({
      field: issue.path.join('.') || 'input',
      message: issue.message,
    })),
  );
}

export function newPayment(input: PaymentInput): Payment {
  return { id: `pay_${randomUUID()}`, ...input, createdAt: new Date().toISOString() };
}
