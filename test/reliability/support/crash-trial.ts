/**
 * One crash trial (SPEC S7-S11): a fresh server process is told to hang at a fault
 * point, receives one payment, and is SIGKILLed exactly there. The retry then goes to a
 * healthy process on the same database:
 *
 * - at once (lease still running): 409 IN_USE, or the stored answer if the crash came after
 *   the commit. On Postgres, whose key is held by the killed process's transaction (S11's
 *   second model), the key went with its connection: the retry runs the payment at once, or
 *   answers 409 if the server has not yet seen the connection close;
 * - after the lease: the payment runs once (a takeover), or replays if it had committed (or
 *   had run at once);
 * - from then on: identical replays, and exactly one payment row for the key.
 *
 * The healthy process is started beside the doomed one rather than after it, so that its
 * start-up (about 2 s on this machine) does not eat the lease being tested.
 *
 * Either surface: tRPC (key in the input) or GraphQL (key in the `Idempotency-Key` header;
 * the healthy process must serve /graphql too, GRAPHQL=1).
 */
import { randomUUID } from 'node:crypto';
import { hashKey } from '../../../src/store/index.js';
import type { Backend } from './backend.js';
import { type Answer, payGraphql, payTrpc } from './client.js';
import type { FaultPoint } from './instrument.js';
import { type ServerEnv, startServer } from './process.js';

export const SURFACES = ['trpc', 'graphql'] as const;
export type Surface = (typeof SURFACES)[number];

const PAY = { trpc: payTrpc, graphql: payGraphql } as const;

/** The `key` column a run writes: GraphQL resolvers only get the key's hash (S26). */
const ROW_KEY = { trpc: (key: string) => key, graphql: (key: string) => `gql:${hashKey(key)}` };

export interface CrashTrial {
  surface: Surface;
  /** Where the doomed process runs: same STORE, LOCATION and TABLE as the healthy one. */
  server: Omit<ServerEnv, 'FAULT_POINT' | 'LEASE_MS'>;
  /** A process on that database without faults. */
  healthyUrl: string;
  /** Reads the payments table. */
  backend: Backend;
  point: FaultPoint;
  leaseMs: number;
}

export interface CrashOutcome {
  surface: Surface;
  point: FaultPoint;
  /** The retry sent right after the kill. */
  early: Answer;
  /** The retry sent after the lease ran out, and a burst of replays after it. */
  late: Answer;
  replays: Answer[];
  /** Payment rows for the key: 1 is right, 2+ is a double execution, 0 a lost result. */
  paymentRows: number;
  /** Whether the early retry really came before the lease ran out (else `early` proves less). */
  earlyWithinLease: boolean;
  /** What went against the rules; empty when the trial passed. */
  violations: string[];
}

export async function crashTrial(trial: CrashTrial): Promise<CrashOutcome> {
  const { surface, point, leaseMs, healthyUrl } = trial;
  const pay = PAY[surface];
  const doomed = await startServer({
    ...trial.server,
    FAULT_POINT: point,
    LEASE_MS: leaseMs,
    ...(surface === 'graphql' ? { GRAPHQL: 1 as const } : {}),
  });
  const key = `crash-${randomUUID()}`;
  const request = { key, amount: 42, account: 'acct_crash' };
  const sentAt = Date.now();
  const lost = pay(doomed.url, request);
  try {
    await doomed.waitForLine(`FAULT ${point}`);
  } finally {
    await doomed.kill();
  }
  // The claim happened between sending and seeing the FAULT line: its lease ends after
  // `sentAt + leaseMs` and before `faultSeenAt + leaseMs`.
  const faultSeenAt = Date.now();
  const first = await lost;

  const early = await pay(healthyUrl, request);
  const earlyWithinLease = Date.now() - sentAt < leaseMs;
  await sleep(Math.max(0, faultSeenAt + leaseMs + 100 - Date.now()));
  const late = await pay(healthyUrl, request);
  const replays = await Promise.all([1, 2, 3].map(() => pay(healthyUrl, request)));
  const rows = (await trial.backend.payments()).filter((row) => row.key === ROW_KEY[surface](key));

  const violations: string[] = [];
  const expect = (ok: boolean, what: string) => {
    if (!ok) violations.push(`${surface} ${point}: ${what}`);
  };
  const inUse = early.status === 409 && early.code === 'IDEMPOTENCY_KEY_IN_USE';
  const ranEarly = early.status === 200 && !early.replayed;
  expect(first.status === 0, `the killed process answered (${first.status})`);
  if (point === 'after-commit') {
    expect(early.status === 200 && early.replayed, `early retry: ${describe(early)}, want replay`);
    expect(late.status === 200 && late.replayed, `late retry: ${describe(late)}, want replay`);
    expect(rows[0]?.id === late.payment?.paymentId, 'the replay is not the committed payment');
  } else if (freedWithTheProcess(trial)) {
    if (trial.server.STORE === 'sqlite') {
      // The kernel drops a dead process's file locks as it exits: the key is free at once.
      expect(ranEarly, `early retry: ${describe(early)}, want a fresh run`);
    } else {
      // The server drops the lock once it has seen the connection close, which may come
      // just after the retry's claim.
      expect(inUse || ranEarly, `early retry: ${describe(early)}, want a fresh run or 409`);
    }
    expect(
      late.status === 200 && late.replayed === ranEarly,
      `late retry: ${describe(late)}, want ${ranEarly ? 'the early run replayed' : 'a fresh run'}`,
    );
    if (ranEarly) expect(late.text === early.text, 'the replay differs from the early run');
  } else {
    if (earlyWithinLease) {
      expect(inUse, `early retry: ${describe(early)}, want 409 IDEMPOTENCY_KEY_IN_USE`);
    }
    expect(
      late.status === 200 && !late.replayed,
      `late retry: ${describe(late)}, want a fresh run`,
    );
  }
  expect(rows.length === 1, `${rows.length} payment rows for one key`);
  expect(rows[0]?.id === late.payment?.paymentId, 'the answer names another payment than the row');
  for (const replay of replays) {
    expect(
      replay.status === 200 && replay.replayed && replay.text === late.text,
      `replay differs: ${describe(replay)} vs ${late.text}`,
    );
  }
  return {
    surface,
    point,
    early,
    late,
    replays,
    paymentRows: rows.length,
    earlyWithinLease,
    violations,
  };
}

/**
 * Whether the store holds a key by its process's transaction, so that a crash frees it at
 * once (S11's second model: both stores' one-transaction claim), rather than by a lease that
 * runs out (the lease model, which the crash servers never run: they set no
 * `beforeTransaction` hook).
 */
function freedWithTheProcess(trial: CrashTrial): boolean {
  return trial.server.STORE === 'postgres' || trial.server.STORE === 'sqlite';
}

export function describe(answer: Answer): string {
  return `${answer.status} ${answer.code ?? ''}${answer.replayed ? ' (replayed)' : ''}`.trim();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
