/**
 * One autocannon run against the bench server, with our own latency samples: autocannon's
 * `response` event gives every response's time, so p99 over several runs is computed from
 * all their samples instead of averaging per-run percentiles.
 */
import autocannon from 'autocannon';
import { PAY_BODY } from './apps/yoga.js';
import { freshKey } from './keys.js';

/**
 * `unguarded`, `distinct` and `duplicates` are the goal's runs; the `design-*` runs load the
 * servers that send a design's statements with no guard (bench/server.ts): how much
 * throughput that design leaves at most.
 */
export type LoadVariant =
  | 'unguarded'
  | 'distinct'
  | 'duplicates'
  | 'design-lock'
  | 'design-claim-inside';

/** Where each variant's requests go (bench/server.ts). */
const PATHS: Record<LoadVariant, string> = {
  unguarded: '/plain',
  distinct: '/graphql',
  duplicates: '/graphql',
  'design-lock': '/design-lock',
  'design-claim-inside': '/design-claim-inside',
};

/** Only the guarded runs carry a key; the design servers make their own. */
const KEYED: ReadonlySet<LoadVariant> = new Set(['distinct', 'duplicates']);

export interface LoadSamples {
  /** Milliseconds per response. */
  latencies: number[];
  seconds: number;
  statuses: Record<string, number>;
  errors: number;
}

/** How far back a duplicate reaches: two connections' worth, so most originals are done (a retry). */
const DUPLICATE_DISTANCE = 128;

export function runLoad(
  url: string,
  variant: LoadVariant,
  options: { connections: number; seconds: number },
): Promise<LoadSamples> {
  const issued: string[] = [];
  let count = 0;
  /** Every 10th request repeats an earlier key: 10% duplicates. */
  const nextKey = (): string => {
    count++;
    if (variant === 'duplicates' && count % 10 === 0 && issued.length >= DUPLICATE_DISTANCE) {
      return issued[issued.length - DUPLICATE_DISTANCE]!;
    }
    const key = freshKey('http');
    issued.push(key);
    if (issued.length > 4 * DUPLICATE_DISTANCE) issued.splice(0, 2 * DUPLICATE_DISTANCE);
    return key;
  };
  const samples: LoadSamples = { latencies: [], seconds: 0, statuses: {}, errors: 0 };
  const headers = {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json',
  };

  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: options.connections,
        duration: options.seconds,
        requests: [
          {
            method: 'POST',
            path: PATHS[variant],
            body: PAY_BODY,
            headers,
            // Only guarded runs carry a key; an explicit `undefined` would replace
            // autocannon's default setupRequest and crash it.
            ...(!KEYED.has(variant)
              ? {}
              : {
                  setupRequest: (request: autocannon.Request) => ({
                    ...request,
                    headers: { ...headers, 'idempotency-key': nextKey() },
                  }),
                }),
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error);
        samples.seconds = result.duration;
        samples.errors = result.errors;
        resolve(samples);
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      samples.latencies.push(responseTime);
      samples.statuses[statusCode] = (samples.statuses[statusCode] ?? 0) + 1;
    });
  });
}
