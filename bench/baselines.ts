/**
 * What each case is compared with. Framework cases against the same framework without the
 * library; framework-free cases against the bare insert; the peer against the same insert.
 * On Postgres a guarded mutation is compared with the unguarded one in a transaction of its
 * own: the guard's result commits atomically with the business write, so that is the
 * like-for-like app without the library (and what the Postgres goals are stated against).
 */
import type { CaseResult } from './results.js';

const BASELINES: Record<string, string> = {
  'graphql.fresh': 'graphql.unguarded',
  'graphql.replay': 'graphql.unguarded',
  'graphql.replay-floor': 'graphql.unguarded',
  'graphql.replay-floor-adapter': 'graphql.unguarded',
  'graphql.fresh-floor': 'graphql.unguarded',
  'graphql.fresh-floor-adapter': 'graphql.unguarded',
  'graphql.unguarded-tx': 'graphql.unguarded',
  'graphql.query-plugin': 'graphql.query-plain',
  'trpc.fresh': 'trpc.unguarded',
  'trpc.replay': 'trpc.unguarded',
  'trpc.replay-floor': 'trpc.unguarded',
  'trpc.replay-floor-adapter': 'trpc.unguarded',
  'trpc.fresh-floor': 'trpc.unguarded',
  'trpc.fresh-floor-adapter': 'trpc.unguarded',
  'trpc.unguarded-tx': 'trpc.unguarded',
  'trpc.query-plugin': 'trpc.query-plain',
  'floor.insert-tx': 'floor.insert',
  'floor.store': 'floor.insert',
  'floor.design': 'floor.insert',
  'core.fresh': 'floor.insert',
  'core.replay': 'floor.insert',
  'peer-memory.fresh': 'floor.insert',
  'peer-memory.replay': 'floor.insert',
  'peer-redis.fresh': 'floor.insert',
  'peer-redis.replay': 'floor.insert',
};

const POSTGRES_BASELINES: Record<string, string> = {
  'graphql.fresh': 'graphql.unguarded-tx',
  'graphql.replay': 'graphql.unguarded-tx',
  'graphql.replay-floor': 'graphql.unguarded-tx',
  'graphql.replay-floor-adapter': 'graphql.unguarded-tx',
  'graphql.fresh-floor': 'graphql.unguarded-tx',
  'graphql.fresh-floor-adapter': 'graphql.unguarded-tx',
  'trpc.fresh': 'trpc.unguarded-tx',
  'trpc.replay': 'trpc.unguarded-tx',
  'trpc.replay-floor': 'trpc.unguarded-tx',
  'trpc.replay-floor-adapter': 'trpc.unguarded-tx',
  'trpc.fresh-floor': 'trpc.unguarded-tx',
  'trpc.fresh-floor-adapter': 'trpc.unguarded-tx',
  'floor.design': 'floor.insert-tx',
  'floor.design-replay': 'floor.insert-tx',
  'core.fresh': 'floor.insert-tx',
  'core.replay': 'floor.insert-tx',
};

/** The baseline of a case id without its database prefix, if it has one. */
export function baselineOf(db: CaseResult['db'], caseId: string): string | undefined {
  return (db === 'postgres' ? POSTGRES_BASELINES[caseId] : undefined) ?? BASELINES[caseId];
}
