/** Raw HTTP calls to the payments service, returning what a careful client would look at. */
import type { PaymentAnswer } from './app.js';

export interface Answer {
  status: number;
  /** `data.idempotencyCode` (tRPC) or `extensions.code` (GraphQL), when there is one. */
  code: string | undefined;
  replayed: boolean;
  /** The payment, on success. */
  payment: PaymentAnswer | undefined;
  /** The raw body, to compare replays byte for byte. */
  text: string;
}

export interface PayRequest {
  key: string;
  amount: number;
  account?: string;
}

/** `pay` over tRPC, the key in the input (S1). Network failures become status 0. */
export async function payTrpc(base: string, request: PayRequest): Promise<Answer> {
  return send(`${base}/trpc/pay`, {
    headers: request.account ? { 'x-account': request.account } : {},
    body: JSON.stringify({ amount: request.amount, idempotencyKey: request.key }),
  });
}

/** `pay` over GraphQL, the key in the `Idempotency-Key` header (S1). */
export async function payGraphql(base: string, request: PayRequest): Promise<Answer> {
  return send(`${base}/graphql`, {
    headers: {
      // The GraphQL-over-HTTP media type, so that request errors get 4xx statuses.
      accept: 'application/graphql-response+json',
      'idempotency-key': request.key,
      ...(request.account ? { 'x-account': request.account } : {}),
    },
    body: JSON.stringify({
      query: 'mutation Pay($amount: Int!) { pay(amount: $amount) { paymentId scope amount pid } }',
      variables: { amount: request.amount },
    }),
  });
}

/** POSTs a body as-is (hostile tests send broken ones) and classifies the answer. */
export async function send(
  url: string,
  init: { headers?: Record<string, string>; body: string },
): Promise<Answer> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...init.headers },
      body: init.body,
    });
  } catch {
    return { status: 0, code: undefined, replayed: false, payment: undefined, text: '' };
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return {
    status: response.status,
    code: codeOf(body),
    replayed: response.headers.get('idempotent-replayed') === 'true',
    payment: paymentOf(body),
    text,
  };
}

function codeOf(body: unknown): string | undefined {
  const b = body as {
    error?: { data?: { idempotencyCode?: string; code?: string } };
    errors?: { extensions?: { code?: string } }[];
  };
  return (
    b?.error?.data?.idempotencyCode ?? b?.error?.data?.code ?? b?.errors?.[0]?.extensions?.code
  );
}

function paymentOf(body: unknown): PaymentAnswer | undefined {
  const b = body as { result?: { data?: PaymentAnswer }; data?: { pay?: PaymentAnswer } };
  return b?.result?.data ?? b?.data?.pay ?? undefined;
}
