import type { GraphQLError } from 'graphql';
import type { AdapterOptions } from '../core/vocabulary.js';

/**
 * Options of `useIdempotency`: those both adapters share (`guard`, `scope`, `required`,
 * `isFinalError`, `retention` in milliseconds, `keyHeader`), and GraphQL's own.
 *
 * `isFinalError` counts only errors raised on purpose (`GraphQLError`s): an unexpected error
 * is never stored, whatever it says. `retention` applies to the plugin's guarded fields that
 * set none of their own (a field's `@idempotent(retentionSeconds:)` or
 * `extensions.idempotent.retention` wins). `keyHeader` defaults to `readKeyHeader`, which
 * reads the headers of `context.request` (a Fetch `Request`: Yoga), else `context.req` (a
 * Node request: Express, Fastify), else `context.headers`.
 */
export interface IdempotencyPluginOptions<Tx = unknown, TContext = Record<string, unknown>>
  extends AdapterOptions<TContext, Tx, GraphQLError> {
  /**
   * Root mutation fields guarded by name, besides those marked `@idempotent` in SDL or
   * `extensions: { idempotent: ... }` code-first. A name the schema lacks is an error.
   * @default []
   */
  fields?: readonly string[];
  /**
   * Also put `extensions: { idempotency: { replayed } }` in the body of guarded answers,
   * for clients that cannot read the `Idempotent-Replayed` header (SPEC S9).
   * @default false
   */
  replayedExtension?: boolean;
  /**
   * The context property where resolvers of a guarded mutation find the idempotency context
   * (`IdempotencyContext`): `context.idempotency.tx`. Write business rows through it so that
   * they commit with the stored result, or not at all (SPEC S8). Absent when the mutation
   * runs unguarded.
   * @default 'idempotency'
   */
  contextField?: string;
}
