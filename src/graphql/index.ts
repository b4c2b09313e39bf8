/**
 * mutation-guard/graphql: the Envelop plugin (also a GraphQL Yoga plugin) and the
 * `@idempotent` directive. Needs the optional peers `graphql`, `@envelop/core` and
 * `@graphql-tools/utils` (Yoga brings the last two).
 */
export {
  GLOBAL_SCOPE,
  IDEMPOTENCY_KEY_FIELD,
  IDEMPOTENCY_KEY_HEADER,
  type IdempotencyContext,
  REPLAYED_HEADER,
  RETRY_AFTER_HEADER,
  readKeyHeader,
} from '../core/adapter.js';
export {
  IDEMPOTENT_DIRECTIVE,
  idempotentDirective,
  idempotentDirectiveTypeDefs,
} from './directive.js';
export type { IdempotencyErrorExtensions } from './errors.js';
export { toGraphQLError } from './errors.js';
export type { IdempotentFieldConfig } from './fields.js';
export type { IdempotencyPluginOptions } from './options.js';
export type { IdempotencyYogaHooks } from './plugin.js';
export { useIdempotency } from './plugin.js';
