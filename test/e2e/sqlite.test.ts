/**
 * The payments service as a child process on SQLite: a temporary file, a free port.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';
import { type ServiceProcess, startService } from '../../examples/payments/demo/service-process.js';
import { LATENCY_MS, serviceContract } from './contract.js';

describe('payments service on SQLite (child process, real HTTP)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mutation-guard-e2e-'));
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    service = await startService({
      env: {
        DATABASE_URL: undefined,
        SQLITE_PATH: join(dir, 'nested', 'payments.sqlite'), // the directory is created
        PAYMENT_LATENCY_MS: String(LATENCY_MS),
      },
    });
  });
  afterAll(async () => {
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  serviceContract({ dialect: 'sqlite', service: () => service!, accounts: [] });
});
