/**
 * One crash trial (SPEC S7-S11): a fresh server process is told to hang at a fault
 * point, receives one payment, and is SIGKILLed exactly there. The retry then goes to a
 * healthy process on the same database:
 *
 * - at once: the stored answer if the crash came after the commit. Otherwise the key went
 *   with the killed process's transaction: on SQLite the retry runs the payment at once; on
 *   Postgres it runs it, or answers 409 if the server has not yet seen the connection close;
 * - a little later (`settleMs`): the early run replayed, or the payment run once;
 * - from then on: identical replays, and exactly one payment row for the key.
 *
 * The healthy process is started beside the doomed one rather than after it, so that its
 * start-up (about 2 s on this machine) is not part of the trial.
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
  server: Omit<ServerEnv, 'FAULT_POINT'>;
  /** A process on that database without faults. */
  healthyUrl: string;
  /** Reads the payments table. */
  backend: Backend;
  point: FaultPoint;
  /**
   * How long after the kill the late retry goes: by then the server has seen the killed
   * connection close, so the key is free unless the early retry ran it.
   */
  settleMs: number;
}

export interface CrashOutcome {
  surface: Surface;
  point: FaultPoint;
  /** The retry sent right after the kill. */
  early: Answer;
  /** The retry sent `settleMs` after the kill, and a burst of replays after it. */
  late: Answer;
  replays: Answer[];
  /** Payment rows for the key: 1 is right, 2+ is a double execution, 0 a lost result. */
  paymentRows: number;
  /** What went against the rules; empty when the trial passed. */
  violations: string[];
}

export async function crashTrial(trial: CrashTrial): Promise<CrashOutcome> {
  const { surface, point, settleMs, healthyUrl } = trial;
  const pay = PAY[surface];
  const doomed = await startServer({
    ...trial.server,
    FAULT_POINT: point,
    ...(surface === 'graphql' ? { GRAPHQL: 1 as const } : {}),
  });
  const key = `crash-${randomUUID()}`;
  const request = { key, amount: 42, account: 'acct_crash' };
  const lost = pay(doomed.url, request);
  try {
    await doomed.waitForLine(`FAULT ${point}`);
  } finally {
    await doomed.kill();
  }
  const killedAt = Date.now();
  const first = await lost;

  const early = await pay(healthyUrl, request);
  await sleep(Math.max(0, killedAt + settleMs - Date.now()));
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
  } else {
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
    violations,
  };
}

export function describe(answer: Answer): string {
  return `${answer.status} ${answer.code ?? ''}${answer.replayed ? ' (replayed)' : ''}`.trim();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
