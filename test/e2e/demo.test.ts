/**
 * `npm run demo`: the retry storm passes against the real service (on SQLite, and on the
 * Postgres that DATABASE_URL names), and its exit code does fail when a service pays a key
 * twice (a fake, non-idempotent service under DEMO_URL).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { postgresAvailability, TEST_DATABASE_URL } from '../support/postgres.js';

// Under CI=true an unreachable Postgres fails the run here instead of skipping.
const pg = await postgresAvailability();
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEMO = fileURLToPath(new URL('../../examples/payments/demo.ts', import.meta.url));

describe.concurrent('npm run demo', () => {
  it('S7/S9/S10: the retry storm on GraphQL and tRPC ends with one payment per key, exit code 0', async () => {
    // Through npm, as users run it: this also checks the script line in package.json.
    const run = await runChild('npm', ['run', '--silent', 'demo'], {});

    expect(run.code, run.output).toBe(0);
    const rows = tableRows(run.output);
    expect(rows.map((r) => `${r.surface} ${r.scenario}`)).toEqual([
      ...Array(3).fill('graphql duplicates'),
      ...Array(3).fill('trpc duplicates'),
      'graphql dropped response',
      'trpc dropped response',
    ]);
    for (const row of rows) {
      expect(row.stored, row.key).toBe(1);
      expect(row.executed + row.dropped, row.key).toBeGreaterThanOrEqual(1);
      expect(row.executed, row.key).toBeLessThanOrEqual(1);
    }
    expect(rows.filter((r) => r.scenario === 'duplicates').every((r) => r.requests >= 20)).toBe(
      true,
    );
    expect(run.output).toContain('OK: every key produced exactly one payment');
    // What each column counts is printed with the table (a dropped response: executed 0).
    for (const column of ['requests', 'executed', 'replayed', 'in use \\(409\\)', 'dropped']) {
      expect(run.output).toMatch(new RegExp(`^${column} +\\S`, 'm'));
    }
    expect(run.output).toMatch(/^payments stored +payments the service holds/m);
    expect(run.output).toMatch(/dropped response shows executed 0 beside payments stored 1/);
  }, 60_000);

  it.skipIf(!pg.realPostgres)(
    `S7/S24: with DATABASE_URL the demo storms a service on that Postgres ${pg.skipReason ?? ''}`,
    async () => {
      const run = await runChild('npm', ['run', '--silent', 'demo'], {
        DATABASE_URL: TEST_DATABASE_URL,
      });

      expect(run.code, run.output).toBe(0);
      expect(run.output).toMatch(/Started the service: .*store: Postgres \(/);
      expect(run.output).not.toMatch(/store: SQLite/);
      expect(tableRows(run.output).every((row) => row.stored === 1)).toBe(true);
      expect(run.output).toContain('OK: every key produced exactly one payment');
    },
    60_000,
  );

  it('exits non-zero when the service under DEMO_URL pays a key more than once', async () => {
    const fake = await nonIdempotentService();
    try {
      const run = await runChild(process.execPath, ['--import', 'tsx', DEMO], {
        DEMO_URL: fake.url,
      });
      expect(run.code, run.output).toBe(1);
      expect(run.output).toMatch(/FAILED:[\s\S]*20 payments stored for one key/);
    } finally {
      await fake.close();
    }
  }, 60_000);
});

interface Row {
  surface: string;
  scenario: string;
  key: string;
  requests: number;
  executed: number;
  dropped: number;
  stored: number;
}

/** The demo's table rows (not the header, rules or total). */
function tableRows(output: string): Row[] {
  const rows: Row[] = [];
  for (const line of output.split('\n')) {
    const match =
      /^(graphql|trpc)\s+(duplicates|dropped response)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$/.exec(
        line,
      );
    if (!match) continue;
    const n = (i: number) => Number(match[i]);
    rows.push({
      surface: match[1]!,
      scenario: match[2]!,
      key: match[3]!,
      requests: n(4),
      executed: n(5),
      dropped: n(8),
      stored: n(9),
    });
  }
  return rows;
}

function runChild(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const { DEMO_URL: _, DATABASE_URL: __, ...inherited } = process.env;
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 55_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

/**
 * A broken service with the demo's API: every request creates a payment, nothing is ever
 * replayed. The demo must notice and fail.
 */
async function nonIdempotentService() {
  const payments: { account: string; payment: Record<string, unknown> }[] = [];
  const server = createServer(async (req, res) => {
    const account = String(req.headers.authorization).replace('Bearer ', '');
    const body = req.method === 'POST' ? JSON.parse(await read(req)) : undefined;
    const mine = () => payments.filter((p) => p.account === account).map((p) => p.payment);
    let answer: unknown;
    if (req.url === '/graphql' && String(body.query).includes('createPayment')) {
      answer = { data: { createPayment: pay(account, body.variables.input) } };
    } else if (req.url === '/graphql') {
      answer = { data: { payments: mine() } };
    } else if (req.url?.startsWith('/trpc/payments.create')) {
      answer = { result: { data: pay(account, body) } };
    } else {
      answer = { result: { data: mine() } };
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
  function pay(account: string, input: Record<string, unknown>) {
    const payment = {
      id: `pay_${randomUUID()}`,
      amount: input.amount,
      currency: input.currency,
      customerId: input.customerId,
      createdAt: new Date().toISOString(),
    };
    payments.push({ account, payment });
    return payment;
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function read(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}
