/**
 * The scripted retry storm. For each surface and several keys, clients behave as real ones
 * do when the network is unreliable:
 *
 * - duplicates: many identical requests at the same moment (a double-clicked button, a
 *   retrying proxy); whoever gets 409 (in flight) retries after a pause until answered;
 * - dropped response: the first request is cut off mid-flight (the client gives up while
 *   the payment is being processed), then the client retries until it gets an answer.
 *
 * Every answer is recorded; the stored payments are counted afterwards through the list
 * endpoint, never inferred from the answers.
 */
import type { PaymentInput } from '../payment.js';
import { type Answer, createPayment, listPayments, type Surface } from './client.js';

export type Scenario = 'duplicates' | 'dropped response';

export interface KeyReport {
  surface: Surface;
  scenario: Scenario;
  key: string;
  requests: number;
  /** Answers with a fresh payment: the mutation ran for this request. */
  executed: number;
  /** Answers marked `Idempotent-Replayed: true`. */
  replayed: number;
  /** 409 IDEMPOTENCY_KEY_IN_USE answers (retried). */
  inUse: number;
  /** Requests the client aborted before an answer came. */
  dropped: number;
  /** Any other answer: a failure of the demo. */
  unexpected: string[];
  /** Payment ids in the successful answers: all must be the one stored payment. */
  answeredIds: Set<string>;
  /** Filled in by `countStored`. */
  stored: number;
}

export interface StormOptions {
  url: string;
  /** A fresh account per run, so that the counts see only this run's payments. */
  account: string;
  /** Keys per surface sent `duplicates` times at once. */
  duplicateKeys: number;
  duplicates: number;
  /** Keys per surface whose first response is dropped. */
  droppedKeys: number;
  /** When the dropped request is aborted; shorter than the service's PAYMENT_LATENCY_MS. */
  dropAfterMs: number;
  /**
   * The pause before retrying a 409. Real clients should honour `Retry-After` (whole
   * seconds); the demo waits less to stay short.
   */
  retryDelayMs: number;
}

const MAX_ATTEMPTS = 50;

export async function runStorm(options: StormOptions): Promise<KeyReport[]> {
  const reports: KeyReport[] = [];
  const phase = (scenario: Scenario, keys: number, run: typeof duplicates) => {
    const runs: Promise<void>[] = [];
    for (const surface of ['graphql', 'trpc'] as const) {
      for (let i = 0; i < keys; i++) {
        // Keys need only be unique within the account (the scope): short and readable.
        const report = newReport(surface, scenario, `${surface}-${reports.length + 1}`);
        reports.push(report);
        const input: PaymentInput = {
          amount: 1000 + reports.length,
          currency: 'EUR',
          customerId: `cus_${report.key}`, // one customer per key, to count payments per key
        };
        runs.push(run(options, report, input));
      }
    }
    return Promise.all(runs);
  };
  // The dropped responses come second, on a quiet service, so that the abort surely falls
  // while the payment is being processed, not while the request waits in a queue.
  await phase('duplicates', options.duplicateKeys, duplicates);
  await phase('dropped response', options.droppedKeys, droppedResponse);
  await countStored(options, reports);
  return reports;
}

async function duplicates(options: StormOptions, report: KeyReport, input: PaymentInput) {
  await Promise.all(
    Array.from({ length: options.duplicates }, () => retryUntilAnswered(options, report, input)),
  );
}

async function droppedResponse(options: StormOptions, report: KeyReport, input: PaymentInput) {
  const controller = new AbortController();
  const first = send(options, report, input, controller.signal);
  await sleep(options.dropAfterMs);
  controller.abort(); // the response is lost; the payment may be in flight or done
  await first;
  await retryUntilAnswered(options, report, input);
}

/** What a careful client does: same key, same body, again after a 409 until answered. */
async function retryUntilAnswered(options: StormOptions, report: KeyReport, input: PaymentInput) {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const answer = await send(options, report, input);
    if (answer?.status !== 409) return;
    await sleep(options.retryDelayMs * (0.5 + Math.random())); // jitter spreads the retries
  }
  report.unexpected.push(`still 409 after ${MAX_ATTEMPTS} attempts`);
}

async function send(
  options: StormOptions,
  report: KeyReport,
  input: PaymentInput,
  signal?: AbortSignal,
): Promise<Answer | undefined> {
  report.requests++;
  let answer: Answer;
  try {
    answer = await createPayment(report.surface, options.url, {
      account: options.account,
      key: report.key,
      input,
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (signal?.aborted) report.dropped++;
    else report.unexpected.push(String(error));
    return undefined;
  }
  if (answer.status === 200 && answer.payment) {
    if (answer.replayed) report.replayed++;
    else report.executed++;
    report.answeredIds.add(answer.payment.id);
  } else if (answer.status === 409) {
    report.inUse++;
  } else {
    report.unexpected.push(`${answer.status} ${answer.code ?? ''}`.trim());
  }
  return answer;
}

/** Counts each key's payments as the service stored them, through each surface's list. */
async function countStored(options: StormOptions, reports: KeyReport[]): Promise<void> {
  for (const surface of ['graphql', 'trpc'] as const) {
    const payments = await listPayments(surface, options.url, options.account);
    for (const report of reports.filter((r) => r.surface === surface)) {
      const mine = payments.filter((p) => p.customerId === `cus_${report.key}`);
      report.stored = mine.length;
      // A successful answer naming a payment that was never stored is as bad as a duplicate.
      for (const id of report.answeredIds) {
        if (!mine.some((p) => p.id === id)) report.unexpected.push(`answered ${id}, not stored`);
      }
    }
  }
}

function newReport(surface: Surface, scenario: Scenario, key: string): KeyReport {
  return {
    surface,
    scenario,
    key,
    requests: 0,
    executed: 0,
    replayed: 0,
    inUse: 0,
    dropped: 0,
    unexpected: [],
    answeredIds: new Set(),
    stored: 0,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
