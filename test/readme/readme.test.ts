/**
 * The README's and the docs' code cannot rot: every `ts` block that names a file under
 * examples/readme or examples/frameworks is that file, word for word (the files are
 * type-checked with the rest of the repo), and the examples are run here as a user would run
 * them (the framework examples in test/frameworks). Blocks that name no such file but present
 * themselves as complete are type-checked as they are by complete-blocks.test.ts.
 */

import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { refundHandler } from '../../examples/readme/core.js';
import { codeFirstYoga } from '../../examples/readme/graphql-code-first.js';
import { yoga } from '../../examples/readme/graphql-yoga.js';
import { createPostgresGuard } from '../../examples/readme/postgres.js';
import { handle } from '../../examples/readme/trpc.js';
import { postgresAvailability, TEST_DATABASE_URL } from '../support/postgres.js';

const pg = await postgresAvailability();
const root = new URL('../../', import.meta.url);
const pages = [
  'README.md',
  ...readdirSync(new URL('docs/', root))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const blocks = pages.flatMap((page) =>
  [
    ...readFileSync(new URL(page, root), 'utf8').matchAll(
      /```ts\n\/\/ (examples\/(?:readme|frameworks)\/[\w-]+\.ts)\n([\s\S]*?)```/g,
    ),
  ].map(([, file, body]) => ({ page, file: file!, body: body! })),
);

describe('README and docs code blocks', () => {
  it('mirror the files in examples/readme and examples/frameworks exactly, and every one is shown', () => {
    for (const { page, file, body } of blocks) {
      expect(body, `${file} in ${page}`).toBe(readFileSync(new URL(file, root), 'utf8'));
    }
    const shown = blocks.map((b) => b.file).sort();
    const files = ['examples/readme/', 'examples/frameworks/'].flatMap((dir) =>
      readdirSync(new URL(dir, root)).map((f) => `${dir}${f}`),
    );
    expect(shown).toEqual(files.sort());
  });
});

const gql = (body: object, headers: Record<string, string> = {}) =>
  new Request('http://localhost/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('README examples run', () => {
  it('S9: the Yoga example stores the payment and replays the first answer', async () => {
    const request = {
      query: 'mutation Pay($input: PayInput!) { pay(input: $input) { id amount } }',
      variables: { input: { amount: 5, idempotencyKey: 'readme-yoga-1' } },
    };
    const first = await yoga.fetch(gql(request, { 'x-account': 'acct_1' }));
    const again = await yoga.fetch(gql(request, { 'x-account': 'acct_1' }));
    expect(first.status).toBe(200);
    const body = await first.json();
    expect(body.data.pay.amount).toBe(5);
    expect(await again.json()).toEqual(body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // S4: the same key from another account is its own record.
    const other = await yoga.fetch(gql(request, { 'x-account': 'acct_2' }));
    expect((await other.json()).data.pay.id).not.toBe(body.data.pay.id);
  });

  it('S1: the code-first example takes the key from the client directive', async () => {
    const query = 'mutation { refund(amount: 7) @idempotent(key: "readme-cf-1") { id amount } }';
    const first = await codeFirstYoga.fetch(gql({ query }));
    const again = await codeFirstYoga.fetch(gql({ query }));
    expect((await first.json()).data.refund.amount).toBe(7);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const missing = await codeFirstYoga.fetch(
      gql({ query: 'mutation { refund(amount: 7) { id } }' }),
    );
    expect(missing.status).toBe(400);
  });

  it('S9: the tRPC example replays with Idempotent-Replayed', async () => {
    const call = () =>
      handle(
        new Request('http://localhost/trpc/pay', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-account': 'acct_1' },
          body: JSON.stringify({ json: { amount: 9, idempotencyKey: 'readme-trpc-1' } }),
        }),
      );
    const first = await call();
    const again = await call();
    expect(first.status).toBe(200);
    expect(await again.text()).toBe(await first.text());
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('S6/S9: the core example answers replays, 422 and 400 as the README says', async () => {
    const post = (body: object, key?: string) =>
      refundHandler(
        new Request('http://localhost/refunds', {
          method: 'POST',
          headers: key ? { 'idempotency-key': key } : {},
          body: JSON.stringify(body),
        }),
        'acct_1',
      );
    const first = await post({ paymentId: 'p1', amount: 3 }, 'readme-core-1');
    const again = await post({ paymentId: 'p1', amount: 3 }, 'readme-core-1');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(await first.json());
    const reused = await post({ paymentId: 'p1', amount: 4 }, 'readme-core-1');
    expect(reused.status).toBe(422);
    expect((await reused.json()).code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect((await post({ paymentId: 'p1', amount: 3 })).status).toBe(400);
  });

  it('S5: the core example answers 413 for an input nested deeper than the guard allows, before any claim', async () => {
    let deep: object = { paymentId: 'p2', amount: 1 };
    for (let level = 0; level < 200; level++) deep = { deep };
    const post = () =>
      refundHandler(
        new Request('http://localhost/refunds', {
          method: 'POST',
          headers: { 'idempotency-key': 'readme-core-deep' },
          body: JSON.stringify(deep),
        }),
        'acct_1',
      );
    const [first, again] = [await post(), await post()];
    expect(first.status).toBe(413);
    expect((await first.json()).code).toBe('IDEMPOTENCY_INPUT_TOO_LARGE');
    expect(again.status).toBe(413);
  });

  describe.skipIf(!pg.realPostgres)(
    `the Postgres example${pg.skipReason ? ` (${pg.skipReason})` : ''}`,
    () => {
      let close: (() => Promise<void>) | undefined;
      afterAll(() => close?.());
      it('S24: migrates (again) and guards a call on the real server', async () => {
        const made = await createPostgresGuard(TEST_DATABASE_URL);
        close = made.close;
        const scope = `readme-${randomUUID()}`;
        const call = {
          scope,
          key: 'k1',
          fingerprint: 'f',
          operation: 'readme',
          work: async () => 42,
        };
        expect(await made.guard.run(call)).toEqual({ value: 42, replayed: false });
        expect(await made.guard.run(call)).toEqual({ value: 42, replayed: true });
      });
    },
  );
});
