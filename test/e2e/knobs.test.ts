/**
 * The service's environment knobs: IDEMPOTENCY_RETENTION_MS reaches the guard, and
 * a bad value stops the service at start with a message naming the variable.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startService } from '../../examples/payments/demo/service-process.js';
import { listPayments, newKey, sleep, trpcCreate, validInput } from './http.js';

describe.concurrent('payments service knobs (child process, SQLite)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mutation-guard-knobs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('S14: with IDEMPOTENCY_RETENTION_MS=600 a key is replayed within 600 ms and new after it', async () => {
    const service = await startService({
      env: {
        DATABASE_URL: undefined,
        SQLITE_PATH: join(dir, 'retention.sqlite'),
        IDEMPOTENCY_RETENTION_MS: '600',
      },
    });
    try {
      const account = `acct_knobs_${newKey()}`;
      const key = newKey();
      const send = () => trpcCreate(service.url, { account, key, input: validInput() });
      const first = await send();
      const soon = await send();
      await sleep(900);
      const later = await send();

      expect(first.status).toBe(200);
      expect(soon.headers.get('idempotent-replayed')).toBe('true');
      expect(later.status).toBe(200);
      expect(later.headers.get('idempotent-replayed')).toBeNull();
      expect(later.json.result.data.id).not.toBe(first.json.result.data.id);
      expect(await listPayments(service.url, account)).toHaveLength(2);
    } finally {
      await service.stop();
    }
  }, 60_000);

  it('refuses to start with a malformed knob, naming the variable', async () => {
    await expect(
      startService({
        env: {
          DATABASE_URL: undefined,
          SQLITE_PATH: join(dir, 'bad.sqlite'),
          IDEMPOTENCY_RETENTION_MS: 'soon',
        },
      }),
    ).rejects.toThrow(/exited with code 1[\s\S]*IDEMPOTENCY_RETENTION_MS must be a whole number/);
  }, 60_000);
});
