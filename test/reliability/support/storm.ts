/**
 * A storm (SPEC S7, S9, S10): many concurrent clients fire payments, a share of
 * them duplicates of earlier keys, at several server processes on one database. Then every
 * answer and every row is checked: one payment per distinct key, and every duplicate got
 * the first answer byte for byte (a replay) or a 409.
 */
import { mulberry32 } from '../../../bench/random.js';
import type { Backend } from './backend.js';
import { type Answer, payTrpc } from './client.js';

export interface StormPlan {
  /** Base URLs of the server processes; each request goes to a random one. */
  urls: string[];
  backend: Backend;
  requests: number;
  /** Share of requests that repeat an earlier key. @default 0.2 */
  duplicateRatio?: number;
  /** Concurrent clients, each sending one request at a time. */
  clients: number;
  /** Makes the plan (keys, order, targets) reproducible. */
  seed: number;
  /** Prefix for this storm's keys, so that storms on one table never share keys. */
  keyPrefix: string;
}

export interface StormFigures {
  requests: number;
  distinctKeys: number;
  duplicates: number;
  /** Duplicates answered with the stored result. */
  replays: number;
  /** Duplicates answered 409 because the first was still running. */
  conflicts: number;
  /** Keys with more than one payment row (each extra row counts once). */
  doubleExecutions: number;
  /** Keys that were answered 200 but whose payment row is missing or differs. */
  lostResults: number;
  /** Answers other than 200/409, or replays that differ from the first answer. */
  violations: string[];
  durationMs: number;
}

export async function runStorm(plan: StormPlan): Promise<StormFigures> {
  const random = mulberry32(plan.seed);
  const calls = planCalls(plan, random);
  const answers: { key: string; answer: Answer }[] = new Array(calls.length);
  let next = 0;
  const started = Date.now();
  // Real concurrency: `clients` loops in flight at once, each taking the next call.
  await Promise.all(
    Array.from({ length: plan.clients }, async () => {
      for (let i = next++; i < calls.length; i = next++) {
        const call = calls[i]!;
        answers[i] = { key: call.key, answer: await payTrpc(call.url, call) };
      }
    }),
  );
  const durationMs = Date.now() - started;
  return judge(plan, calls.length, answers, durationMs);
}

interface Call {
  key: string;
  amount: number;
  account: string;
  url: string;
}

function planCalls(plan: StormPlan, random: () => number): Call[] {
  const ratio = plan.duplicateRatio ?? 0.2;
  const distinct = Math.round(plan.requests * (1 - ratio));
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const originals = Array.from({ length: distinct }, (_, i) => ({
    key: `${plan.keyPrefix}-${i}`,
    amount: 1 + (i % 997),
    account: `acct_${i % 7}`,
  }));
  const calls: Omit<Call, 'url'>[] = [...originals];
  // Duplicates land soon after their original (within ~2 clients' worth of calls), so
  // that many arrive while it is still running (409) and the rest after it (replay).
  for (let d = 0; d < plan.requests - distinct; d++) {
    const at = Math.floor(random() * calls.length);
    const original = calls[Math.max(0, at - Math.floor(random() * 2 * plan.clients))]!;
    calls.splice(at + 1, 0, { ...original });
  }
  return calls.map((call) => ({ ...call, url: pick(plan.urls) }));
}

async function judge(
  plan: StormPlan,
  requests: number,
  answers: { key: string; answer: Answer }[],
  durationMs: number,
): Promise<StormFigures> {
  const rows = (await plan.backend.payments()).filter((row) =>
    row.key.startsWith(`${plan.keyPrefix}-`),
  );
  const rowsByKey = groupBy(rows, (row) => row.key);
  const answersByKey = groupBy(answers, (a) => a.key);
  const violations: string[] = [];
  let replays = 0;
  let conflicts = 0;
  let lostResults = 0;
  for (const [key, group] of answersByKey) {
    const fresh = group.filter((a) => a.answer.status === 200 && !a.answer.replayed);
    if (fresh.length !== 1) violations.push(`${key}: ${fresh.length} fresh answers`);
    const first = fresh[0]?.answer;
    for (const { answer } of group) {
      if (answer.status === 409 && answer.code === 'IDEMPOTENCY_KEY_IN_USE') conflicts++;
      else if (answer.status === 200 && answer.replayed) {
        replays++;
        if (first && answer.text !== first.text) violations.push(`${key}: replay differs`);
      } else if (answer !== first) {
        violations.push(`${key}: answered ${answer.status} ${answer.code ?? ''}`);
      }
    }
    const row = rowsByKey.get(key)?.[0];
    if (first && (!row || row.id !== first.payment?.paymentId)) lostResults++;
  }
  let doubleExecutions = 0;
  for (const group of rowsByKey.values()) doubleExecutions += group.length - 1;
  return {
    requests,
    distinctKeys: answersByKey.size,
    duplicates: requests - answersByKey.size,
    replays,
    conflicts,
    doubleExecutions,
    lostResults,
    violations: violations.slice(0, 20),
    durationMs,
  };
}

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
