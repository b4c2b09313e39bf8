/**
 * Hostile input over HTTP (SPEC S2, S13, S19): fuzzed keys in inputs and headers,
 * control characters, unicode, oversize keys, broken JSON, fuzzed GraphQL variables and
 * huge bodies, on both surfaces. Every answer is a 4xx with a clear code where the request
 * reached the guard, never a 5xx, and nothing is ever stored or paid.
 */
import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, openBackend, tempSqliteFile } from './support/backend.js';
import { type Answer, send } from './support/client.js';
import { type Served, serveApp } from './support/serve.js';

const VALID_KEY = /^[\x21-\x7e]{1,255}$/;
const invalidKey = fc
  .oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
    fc.string({ minLength: 256, maxLength: 2000 }),
    fc.constantFrom(
      '',
      ' ',
      'a b',
      'tab\there',
      'nul\u0000',
      'del\u007f',
      'ключ',
      '🔑',
      'x'.repeat(256),
    ),
  )
  .filter((key) => !VALID_KEY.test(key));
/**
 * What reaches the app through fetch and Node's header parser: HTAB, visible ASCII, space
 * and obs-text (0x80-0xFF). Other control characters are refused by Node's parser itself
 * (400 before the app): the raw-socket test sends those.
 */
const headerChar = fc
  .oneof(
    fc.constant(0x09),
    fc.integer({ min: 0x20, max: 0x7e }),
    fc.integer({ min: 0x80, max: 0xff }),
  )
  .map((c) => String.fromCharCode(c));
const headerKey = fc
  .oneof(
    fc.string({ unit: headerChar, maxLength: 40 }),
    fc.string({ unit: headerChar, minLength: 256, maxLength: 600 }),
    fc.constantFrom('"unterminated', '"a"b', '"bad\\escape\\x"', '""', 'caf\u00e9'),
  )
  .map((key) => key.trim())
  .filter((key) => key.length > 0 && !VALID_KEY.test(key) && !/^"[\x21-\x7e]+"$/.test(key));

describe('hostile input over HTTP: only 4xx with clear codes, nothing stored', () => {
  let backend: Backend;
  let app: Served;
  const answers: Answer[] = [];
  const post = async (path: string, body: string, headers: Record<string, string> = {}) => {
    const answer = await send(`${app.url}${path}`, { headers, body });
    answers.push(answer);
    return answer;
  };
  const gqlHeaders = (key: string) => ({
    accept: 'application/graphql-response+json',
    'idempotency-key': key,
  });
  const payDoc = 'mutation Pay($amount: Int!) { pay(amount: $amount) { paymentId } }';

  beforeAll(async () => {
    backend = await openBackend({ kind: 'sqlite', location: tempSqliteFile(), table: 'idem' });
    app = await serveApp(backend, {}, { graphql: true, maxBodyBytes: 64 * 1024 });
  });
  afterAll(async () => {
    // The point of the whole file: nothing hostile was claimed, stored or paid (S13).
    expect(await backend.records()).toEqual([]);
    expect(await backend.payments()).toEqual([]);
    expect(answers.filter((a) => a.status < 400 || a.status >= 500).map((a) => a.status)).toEqual(
      [],
    );
    await app.close();
    await backend.close();
  });

  it('S2: fuzzed keys in the tRPC input and the GraphQL argument: 400 IDEMPOTENCY_KEY_INVALID', async () => {
    await fc.assert(
      fc.asyncProperty(invalidKey, async (key) => {
        const trpc = await post('/trpc/pay', JSON.stringify({ amount: 5, idempotencyKey: key }));
        const gql = await post(
          '/graphql',
          JSON.stringify({
            query: 'mutation Pay($k: String) { pay(amount: 5, idempotencyKey: $k) { paymentId } }',
            variables: { k: key },
          }),
          { accept: 'application/graphql-response+json' },
        );
        expect([trpc.status, trpc.code]).toEqual([400, 'IDEMPOTENCY_KEY_INVALID']);
        expect([gql.status, gql.code]).toEqual([400, 'IDEMPOTENCY_KEY_INVALID']);
      }),
      { seed: 6, numRuns: 60 },
    );
  });

  it('S2: fuzzed Idempotency-Key headers (Latin-1, oversize, broken quoting): 400 IDEMPOTENCY_KEY_INVALID', async () => {
    await fc.assert(
      fc.asyncProperty(headerKey, async (key) => {
        const gql = await post(
          '/graphql',
          JSON.stringify({ query: payDoc, variables: { amount: 5 } }),
          gqlHeaders(key),
        );
        const trpc = await post('/trpc/pay', JSON.stringify({ amount: 5 }), {
          'idempotency-key': key,
        });
        expect([gql.status, gql.code]).toEqual([400, 'IDEMPOTENCY_KEY_INVALID']);
        expect([trpc.status, trpc.code]).toEqual([400, 'IDEMPOTENCY_KEY_INVALID']);
      }),
      { seed: 6, numRuns: 60 },
    );
  });

  it('S2: raw control characters and UTF-8 bytes in the header (past what fetch allows): 4xx', async () => {
    for (const value of ['ab\u0001cd', 'ключ-1', 'a\u007fb', 'x'.repeat(8000)]) {
      const status = await rawPost(app.url, value);
      answers.push({ status, code: undefined, replayed: false, payment: undefined, text: '' });
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(500);
    }
  });

  it('S1/S13: two sources that disagree, or no key at all: 400 with the SPEC code', async () => {
    const both = await post('/trpc/pay', JSON.stringify({ amount: 5, idempotencyKey: 'a' }), {
      'idempotency-key': 'b',
    });
    const none = await post('/trpc/pay', JSON.stringify({ amount: 5 }));
    const gqlNone = await post(
      '/graphql',
      JSON.stringify({ query: payDoc, variables: { amount: 5 } }),
      { accept: 'application/graphql-response+json' },
    );
    expect([both.status, both.code]).toEqual([400, 'IDEMPOTENCY_KEY_INVALID']);
    expect([none.status, none.code]).toEqual([400, 'IDEMPOTENCY_KEY_MISSING']);
    expect([gqlNone.status, gqlNone.code]).toEqual([400, 'IDEMPOTENCY_KEY_MISSING']);
  });

  it('S13: broken JSON bodies with a valid key: 4xx, nothing claimed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 200 }), async (body) => {
        fc.pre(!isObjectJson(body));
        const trpc = await post('/trpc/pay', body, { 'idempotency-key': 'broken-json' });
        const gql = await post('/graphql', body, gqlHeaders('broken-json'));
        expect(trpc.status).toBeGreaterThanOrEqual(400);
        expect(gql.status).toBeGreaterThanOrEqual(400);
      }),
      { seed: 6, numRuns: 60 },
    );
  });

  it('S13: fuzzed GraphQL variables with a valid key: 4xx (coercion fails before execution), nothing claimed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.anything(), async (variables) => {
        const amount = (variables as { amount?: unknown } | null)?.amount;
        fc.pre(!(Number.isInteger(amount) && Math.abs(amount as number) < 2 ** 31));
        const gql = await post(
          '/graphql',
          JSON.stringify({ query: payDoc, variables }),
          gqlHeaders('fuzzed-vars'),
        );
        expect(gql.status).toBeGreaterThanOrEqual(400);
      }),
      { seed: 6, numRuns: 60 },
    );
  });

  it('S13: huge bodies with a valid key (1 MiB input, 10 000 nested arrays): 413/400, nothing claimed', async () => {
    const huge = JSON.stringify({ amount: 5, idempotencyKey: 'huge-1', note: 'x'.repeat(1 << 20) });
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const gqlHuge = JSON.stringify({
      query: payDoc,
      variables: { amount: 5, pad: 'x'.repeat(1 << 20) },
    });
    for (const answer of [
      await post('/trpc/pay', huge),
      await post('/trpc/pay', deep, { 'idempotency-key': 'huge-2' }),
      await post('/graphql', gqlHuge, gqlHeaders('huge-3')),
      await post('/graphql', deep, gqlHeaders('huge-4')),
    ]) {
      expect(answer.status).toBeGreaterThanOrEqual(400);
    }
  });
});

function isObjectJson(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}

/** A hand-written request, so that bytes fetch refuses still reach the server. */
function rawPost(base: string, keyValue: string): Promise<number> {
  const { port } = new URL(base);
  const body = JSON.stringify({ amount: 5 });
  const head = [
    'POST /trpc/pay HTTP/1.1',
    `Host: 127.0.0.1:${port}`,
    'Content-Type: application/json',
    `Content-Length: ${body.length}`,
    'Connection: close',
  ];
  const request = Buffer.concat([
    Buffer.from(`${head.join('\r\n')}\r\nIdempotency-Key: `, 'latin1'),
    Buffer.from(keyValue, 'utf8'),
    Buffer.from(`\r\n\r\n${body}`, 'latin1'),
  ]);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.end(request));
    let reply = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      reply += chunk;
    });
    socket.on('error', reject).on('close', () => resolve(Number(reply.split(' ')[1] ?? 0)));
  });
}
