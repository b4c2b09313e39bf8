/**
 * `npm run demo`: a scripted retry storm against the payments service, on GraphQL and tRPC.
 *
 * Where it storms, from the environment:
 * - nothing set: it starts the service itself (a child process on a free port) on a
 *   throw-away SQLite file;
 * - DATABASE_URL=postgres://...: it starts the service itself on that Postgres (the demo's
 *   tables are created if missing; each run uses a fresh account, so earlier rows do not
 *   count);
 * - DEMO_URL=http://localhost:4000: it starts nothing and storms a service you started
 *   yourself (say several processes on one Postgres behind a proxy).
 *
 * The service it starts runs with PAYMENT_LATENCY_MS=300, so that duplicates meet a
 * payment in flight. It prints one row per key, and under the table what each column counts,
 * and exits 1 if any key produced more than one payment (or none, or answers that disagree).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printTable, problems } from './demo/report.js';
import { type ServiceProcess, startService } from './demo/service-process.js';
import { runStorm } from './demo/storm.js';
import { redactUrl } from './redact.js';

const LATENCY_MS = 300;

async function main(): Promise<number> {
  const target = process.env.DEMO_URL?.replace(/\/+$/, '');
  let service: ServiceProcess | undefined;
  let tempDir: string | undefined;
  try {
    if (target) {
      console.log(`Storming ${redactUrl(target)} (DEMO_URL)`);
    } else {
      const databaseUrl = process.env.DATABASE_URL?.trim() || undefined;
      if (!databaseUrl) tempDir = mkdtempSync(join(tmpdir(), 'mutation-guard-demo-'));
      service = await startService({
        env: {
          DATABASE_URL: databaseUrl,
          // Used only without DATABASE_URL: a throw-away file, removed at the end.
          SQLITE_PATH: tempDir ? join(tempDir, 'payments.sqlite') : undefined,
          PAYMENT_LATENCY_MS: String(LATENCY_MS),
        },
      });
      // The service's own line names the store, with any password masked.
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
    console.log(`\n(${Date.now() - started} ms)`);

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
