/**
 * The peer: @node-idempotency/core guarding the same one-row insert, as its framework
 * wrappers do: `onRequest` (claim or cached answer), the work, `onResponse` (store the
 * answer). It offers in-memory and Redis storage; it has no Postgres (or SQLite) storage, so
 * its records never commit with the business write the way ours do.
 */
import { Idempotency } from '@node-idempotency/core';
import { MemoryStorageAdapter } from '@node-idempotency/storage-adapter-memory';
import { RedisStorageAdapter } from '@node-idempotency/storage-adapter-redis';
import type { BenchDb } from './db.js';

export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface Peer {
  storage: 'memory' | 'redis';
  pay(key: string): Promise<{ id: number; amount: number }>;
  close(): Promise<void>;
}

type Storage = ConstructorParameters<typeof Idempotency>[0];

export async function openPeers(db: BenchDb, prefix: string): Promise<Peer[]> {
  const redis = new RedisStorageAdapter({ url: REDIS_URL });
  await redis.connect();
  return [
    peer('memory', new MemoryStorageAdapter(), db, prefix, async () => {}),
    peer('redis', redis as unknown as Storage, db, prefix, () => redis.disconnect()),
  ];
}

function peer(
  storage: Peer['storage'],
  adapter: Storage,
  db: BenchDb,
  prefix: string,
  close: () => Promise<void>,
): Peer {
  // A short TTL: the bench must not leave a day's worth of keys in a shared Redis.
  const idempotency = new Idempotency(adapter, {
    cacheKeyPrefix: `${prefix}-${storage}`,
    cacheTTLMS: 10 * 60_000,
  });
  return {
    storage,
    async pay(key) {
      const request = {
        headers: { 'idempotency-key': key },
        path: '/pay',
        method: 'POST',
        body: { amount: 42 },
      };
      const cached = await idempotency.onRequest<{ id: number; amount: number }, unknown>(request);
      if (cached?.body) return cached.body;
      const body = { id: await db.insert(42), amount: 42 };
      await idempotency.onResponse(request, { body });
      return body;
    },
    close,
  };
}
