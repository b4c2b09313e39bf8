/**
 * mutation-guard/graphql: the Envelop plugin (also a GraphQL Yoga plugin) and the
 * `@idempotent` directive. Needs the optional peers `graphql`, `@envelop/core` and
 * `@graphql-tools/utils` (Yoga brings the last two).
 */
// The vocabulary both adapters share: options, context type, names, readKeyHeader.
export * from '../core/vocabulary.js';
export {
  IDEMPOTENT_DIRECTIVE,
  idempotentDirective,
  idempotentDirectiveTypeDefs,
} from './directive.js';
export type { IdempotencyErrorExtensions } from './errors.js';
export { toGraphQLError } from './errors.js';
export type { IdempotentFieldConfig } from './fields.js';
export type { IdempotencyPluginOptions } from './options.js';
export type { IdempotencyYogaHooks, YogaLoggerLike } from './plugin.js';
export { useIdempotency } from './plugin.js';
