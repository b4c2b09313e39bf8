/**
 * A minimal HTTP client for both surfaces, with plain `fetch`, the way any client (curl, a
 * mobile app) would call the service: the account in `Authorization`, the key in the
 * `Idempotency-Key` header (GraphQL) or the input's `idempotencyKey` (tRPC).
 */
import type { Payment, PaymentInput } from '../payment.js';

export type Surface = 'graphql' | 'trpc';

export interface Answer {
  status: number;
  /** `Idempotent-Replayed: true`: the stored answer, the mutation did not run again. */
  replayed: boolean;
  payment?: Payment;
  /** The error code: GraphQL `extensions.code`, tRPC `data.idempotencyCode` or `data.code`. */
  code?: string;
  /** Seconds, from the `Retry-After` header of a 409. */
  retryAfter?: number;
}

const CREATE_PAYMENT = /* GraphQL */ `
  mutation CreatePayment($input: CreatePaymentInput!) {
    createPayment(input: $input) { id amount currency customerId createdAt }
  }
`;

export async function createPayment(
  surface: Surface,
  baseUrl: string,
  request: { account: string; key: string; input: PaymentInput; signal?: AbortSignal },
): Promise<Answer> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    authorization: `Bearer ${request.account}`,
  };
  let url: string;
  let body: unknown;
  if (surface === 'graphql') {
    url = `${baseUrl}/graphql`;
    headers['idempotency-key'] = request.key;
    body = { query: CREATE_PAYMENT, variables: { input: request.input } };
  } else {
    url = `${baseUrl}/trpc/payments.create`;
    body = { ...request.input, idempotencyKey: request.key };
  }
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    ...(request.signal ? { signal: request.signal } : {}),
  });
  const json = (await response.json()) as GraphQLBody & TrpcBody;
  const retryAfter = response.headers.get('retry-after');
  return {
    status: response.status,
    replayed: response.headers.get('idempotent-replayed') === 'true',
    ...(retryAfter ? { retryAfter: Number(retryAfter) } : {}),
    ...(surface === 'graphql' ? fromGraphQL(json) : fromTrpc(json)),
  };
}

/** The account's stored payments, read through the service's own list endpoint. */
export async function listPayments(
  surface: Surface,
  baseUrl: string,
  account: string,
): Promise<Payment[]> {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${account}` };
  if (surface === 'graphql') {
    const response = await fetch(`${baseUrl}/graphql`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: '{ payments { id amount currency customerId createdAt } }' }),
    });
    const json = (await response.json()) as { data?: { payments: Payment[] } };
    if (!json.data) throw new Error(`payments query failed: ${JSON.stringify(json)}`);
    return json.data.payments;
  }
  const response = await fetch(`${baseUrl}/trpc/payments.list`, { headers });
  const json = (await response.json()) as { result?: { data: Payment[] } };
  if (!json.result) throw new Error(`payments.list failed: ${JSON.stringify(json)}`);
  return json.result.data;
}

interface GraphQLBody {
  data?: { createPayment?: Payment } | null;
  errors?: { extensions?: { code?: string } }[];
}
interface TrpcBody {
  result?: { data: Payment };
  error?: { data?: { code?: string; idempotencyCode?: string } };
}

function fromGraphQL(json: GraphQLBody): Pick<Answer, 'payment' | 'code'> {
  const payment = json.data?.createPayment;
  if (payment) return { payment };
  return { code: json.errors?.[0]?.extensions?.code ?? 'UNKNOWN' };
}

function fromTrpc(json: TrpcBody): Pick<Answer, 'payment' | 'code'> {
  if (json.result) return { payment: json.result.data };
  return { code: json.error?.data?.idempotencyCode ?? json.error?.data?.code ?? 'UNKNOWN' };
}
