/**
 * What each case is compared with. Framework cases against the same framework without the
 * library; framework-free cases against the bare insert; the peer against the same insert.
 */
const BASELINES: Record<string, string> = {
  'graphql.fresh': 'graphql.unguarded',
  'graphql.replay': 'graphql.unguarded',
  'graphql.query-plugin': 'graphql.query-plain',
  'trpc.fresh': 'trpc.unguarded',
  'trpc.replay': 'trpc.unguarded',
  'trpc.query-plugin': 'trpc.query-plain',
  'floor.insert-tx': 'floor.insert',
  'floor.store': 'floor.insert',
  'core.fresh': 'floor.insert',
  'core.replay': 'floor.insert',
  'peer-memory.fresh': 'floor.insert',
  'peer-memory.replay': 'floor.insert',
  'peer-redis.fresh': 'floor.insert',
  'peer-redis.replay': 'floor.insert',
};

/** The baseline of a case id without its database prefix, if it has one. */
export function baselineOf(caseId: string): string | undefined {
  return BASELINES[caseId];
}
