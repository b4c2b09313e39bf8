/**
 * Raw HTTP calls to the payments service, as any client would make them: status, headers
 * and body text are kept, so that tests can compare replayed bodies byte for byte.
 */
import { randomBytes } from 'node:crypto';

export interface Raw {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected loosely in tests
  json: any;
}

export interface PaymentFields {
  amount: unknown;
  currency: unknown;
  customerId: unknown;
  idempotencyKey?: unknown;
}

/** A fresh account (the idempotency scope), so that tests and runs never share rows. */
export function newAccount(accounts: string[]): string {
  const account = `acct_e2e_${randomBytes(6).toString('hex')}`;
  accounts.push(account);
  return account;
}

export function newKey(): string {
  return `key-${randomBytes(8).toString('hex')}`;
}

export function validInput(overrides: Partial<PaymentFields> = {}): PaymentFields {
  return { amount: 1299, currency: 'EUR', customerId: 'cus_42', ...overrides };
}

async function raw(url: string, init: RequestInit): Promise<Raw> {
  const response = await fetch(url, init);
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

function headersFor(account: string | undefined, key: string | undefined, authorization?: string) {
  const auth = authorization ?? (account === undefined ? undefined : `Bearer ${account}`);
  return {
    'content-type': 'application/json',
    ...(auth === undefined ? {} : { authorization: auth }),
    ...(key === undefined ? {} : { 'idempotency-key': key }),
  };
}

export const CREATE_PAYMENT = /* GraphQL */ `
  mutation Pay($input: CreatePaymentInput!) {
    createPayment(input: $input) { id amount currency customerId createdAt }
  }
`;

/** POST /graphql. `key` goes in the `Idempotency-Key` header; the input may carry its own. */
export function graphql(
  base: string,
  options: {
    account?: string;
    key?: string;
    query?: string;
    variables?: unknown;
    /** Replaces the `Bearer <account>` header. */
    authorization?: string;
  },
): Promise<Raw> {
  return raw(`${base}/graphql`, {
    method: 'POST',
    headers: headersFor(options.account, options.key, options.authorization),
    body: JSON.stringify({ query: options.query ?? CREATE_PAYMENT, variables: options.variables }),
  });
}

/** POST /trpc/payments.create with a plain JSON input (the service has no transformer). */
export function trpcCreate(
  base: string,
  options: { account?: string; key?: string; input: unknown },
): Promise<Raw> {
  return raw(`${base}/trpc/payments.create`, {
    method: 'POST',
    headers: headersFor(options.account, options.key),
    body: JSON.stringify(options.input),
  });
}

/** The account's payments, through both surfaces' list endpoints (they must agree). */
export async function listPayments(base: string, account: string) {
  const viaGraphQL = await graphql(base, {
    account,
    query: '{ payments { id amount currency customerId createdAt } }',
  });
  const viaTrpc = await raw(`${base}/trpc/payments.list`, {
    headers: headersFor(account, undefined),
  });
  const fromGraphQL = viaGraphQL.json?.data?.payments;
  const fromTrpc = viaTrpc.json?.result?.data;
  if (!Array.isArray(fromGraphQL) || !Array.isArray(fromTrpc)) {
    throw new Error(`listing failed: ${viaGraphQL.text} / ${viaTrpc.text}`);
  }
  if (JSON.stringify(fromGraphQL) !== JSON.stringify(fromTrpc)) {
    throw new Error(`the two list endpoints disagree: ${viaGraphQL.text} / ${viaTrpc.text}`);
  }
  return fromGraphQL as { id: string; amount: number; customerId: string }[];
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
