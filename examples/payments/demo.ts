/**
 * `npm run demo`: a scripted retry storm against the payments service, on GraphQL and tRPC.
 *
 * By default it starts the service itself (a child process on a free port, a temporary
 * SQLite file, PAYMENT_LATENCY_MS=300 so that duplicates meet a payment in flight). Set
 * DEMO_URL=http://localhost:4000 to storm a service you started yourself instead (say on
 * Postgres, with several processes behind a proxy).
 *
 * It prints one row per key and exits 1 if any key produced more than one payment (or none,
 * or answers that disagree).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printTable, problems } from './demo/report.js';
import { type ServiceProcess, startService } from './demo/service-process.js';
import { runStorm } from './demo/storm.js';

const LATENCY_MS = 300;

async function main(): Promise<number> {
  const target = process.env.DEMO_URL?.replace(/\/+$/, '');
  let service: ServiceProcess | undefined;
  let tempDir: string | undefined;
  try {
    if (target) {
      console.log(`Storming ${target} (DEMO_URL)`);
    } else {
      tempDir = mkdtempSync(join(tmpdir(), 'mutation-guard-demo-'));
      service = await startService({
        env: {
          DATABASE_URL: undefined, // always the throw-away SQLite file, even if set outside
          SQLITE_PATH: join(tempDir, 'payments.sqlite'),
          PAYMENT_LATENCY_MS: String(LATENCY_MS),
        },
      });
      console.log(`Started the service: ${service.banner.trim()}`);
    }
    const url = target ?? service!.url;
    const account = `acct_demo_${randomBytes(4).toString('hex')}`;
    const storm = {
      duplicateKeys: 3,
      duplicates: 20,
      droppedKeys: 1,
      dropAfterMs: Math.round(LATENCY_MS / 3),
      retryDelayMs: 100,
    };
    console.log(
      `Account ${account}, on GraphQL and on tRPC: ${storm.duplicateKeys} keys sent ${storm.duplicates} times at once each (409s retried), then ${storm.droppedKeys} key whose first response is dropped mid-flight, then retried.\n`,
    );
    const started = Date.now();
    const reports = await runStorm({ url, account, ...storm });
    printTable(reports);
    console.log(
      `\n(${Date.now() - started} ms; "payments stored" is counted via the list endpoints)`,
    );

    const found = problems(reports);
    if (found.length > 0) {
      console.error(`\nFAILED:\n  ${found.join('\n  ')}`);
      return 1;
    }
    console.log('\nOK: every key produced exactly one payment, and every answer named it.');
    return 0;
  } finally {
    await service?.stop();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
