/**
 * mutation-guard/graphql: the Envelop plugin (also a GraphQL Yoga plugin) and the
 * `@idempotent` directive. Needs the optional peers `graphql`, `@envelop/core` and
 * `@graphql-tools/utils` (Yoga brings the last two).
 */
export {
  IDEMPOTENT_DIRECTIVE,
  idempotentDirective,
  idempotentDirectiveTypeDefs,
} from './directive.js';
export type { IdempotencyErrorExtensions } from './errors.js';
export { toGraphQLError } from './errors.js';
export type { IdempotentFieldConfig } from './fields.js';
export { KEY_FIELD } from './fields.js';
export { REPLAYED_HEADER } from './http.js';
export { KEY_HEADER, readKeyHeader } from './key.js';
export type { IdempotencyContext, IdempotencyPluginOptions } from './options.js';
export { GLOBAL_SCOPE } from './options.js';
export type { IdempotencyYogaHooks } from './plugin.js';
export { useIdempotency } from './plugin.js';
