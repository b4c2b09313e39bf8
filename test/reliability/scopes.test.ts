/**
 * Scopes (SPEC S4): the same keys sent by different accounts, at the same time,
 * over both surfaces. Each account gets its own payment and its own replays; no account
 * ever sees, blocks (409) or replays another's record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, openBackend, tempSqliteFile } from './support/backend.js';
import { payGraphql, payTrpc } from './support/client.js';
import { type Served, serveApp } from './support/serve.js';

const ACCOUNTS = ['acct_a', 'acct_b', 'acct_c'];
const KEYS = ['shared-1', 'shared-2', 'shared-3', 'shared-4'];

describe('scopes never replay across', () => {
  let backend: Backend;
  let app: Served;
  beforeAll(async () => {
    backend = await openBackend({ kind: 'sqlite', location: tempSqliteFile(), table: 'idem' });
    app = await serveApp(backend, {}, { graphql: true });
  });
  afterAll(async () => {
    await app.close();
    await backend.close();
  });

  for (const [surface, pay] of [
    ['trpc', payTrpc],
    ['graphql', payGraphql],
  ] as const) {
    it(`S4 ${surface}: ${ACCOUNTS.length} accounts x ${KEYS.length} shared keys at once: one payment each, each replays its own`, async () => {
      // Different amounts per account: a cross-scope replay would also be a 422 if the
      // scope were ignored, and a wrong amount if the fingerprint were.
      const calls = ACCOUNTS.flatMap((account, a) =>
        KEYS.map((key) => ({ account, key: `${surface}-${key}`, amount: 10 * (a + 1) })),
      );
      const first = await Promise.all(calls.map((call) => pay(app.url, call)));
      const again = await Promise.all(calls.map((call) => pay(app.url, call)));
      first.forEach((answer, i) => {
        expect(answer).toMatchObject({ status: 200, replayed: false });
        expect(answer.payment).toMatchObject({
          scope: calls[i]!.account,
          amount: calls[i]!.amount,
        });
        expect(again[i]).toMatchObject({ status: 200, replayed: true, text: answer.text });
      });
      const ids = new Set(first.map((answer) => answer.payment?.paymentId));
      expect(ids.size).toBe(calls.length);
    });
  }
});
