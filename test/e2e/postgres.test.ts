/**
 * The payments service on the real Postgres: two processes started at once on one
 * database (their start-up migrations race on purpose), the contract run against one, and
 * duplicates split across both. The tables are the service's fixed ones, shared with anyone
 * else using this database, so the suite only ever deletes its own accounts' rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startService } from '../../examples/payments/demo/service-process.js';
import { deleteDemoRowsOf, postgresAvailability, TEST_DATABASE_URL } from '../support/postgres.js';
import { LATENCY_MS, serviceContract } from './contract.js';
import { graphql, listPayments, newAccount, newKey, trpcCreate, validInput } from './http.js';

// Under CI=true an unreachable Postgres fails the run here instead of skipping.
const availability = await postgresAvailability();

describe.skipIf(!availability.realPostgres)(
  `payments service on Postgres, two processes (real HTTP) ${availability.skipReason ?? ''}`,
  () => {
    const accounts: string[] = [];
    let services: ServiceProcess[] = [];

    beforeAll(async () => {
      const env = {
        DATABASE_URL: TEST_DATABASE_URL,
        PAYMENT_LATENCY_MS: String(LATENCY_MS),
      };
      services = await Promise.all([startService({ env }), startService({ env })]);
    });
    afterAll(async () => {
      await Promise.all(services.map((s) => s.stop()));
      await deleteDemoRowsOf(accounts);
    });

    serviceContract({ dialect: 'postgres', service: () => services[0]!, accounts });

    it('S7/S24: 30 duplicates split across two processes on one Postgres make one payment', async () => {
      const acct = newAccount(accounts);
      const key = newKey();
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          graphql(services[i % 2]!.url, { account: acct, key, variables: { input: validInput() } }),
        ),
      );
      const trpcKey = newKey();
      const trpcAnswers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          trpcCreate(services[i % 2]!.url, { account: acct, key: trpcKey, input: validInput() }),
        ),
      );

      for (const batch of [answers, trpcAnswers]) {
        const statuses = new Set(batch.map((a) => a.status));
        expect([...statuses].every((s) => s === 200 || s === 409)).toBe(true);
        const fresh = batch.filter(
          (a) => a.status === 200 && a.headers.get('idempotent-replayed') !== 'true',
        );
        expect(fresh).toHaveLength(1);
      }
      expect(await listPayments(services[1]!.url, acct)).toHaveLength(2);
    });
  },
);
