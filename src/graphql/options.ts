import type { GraphQLError } from 'graphql';
import type { Guard } from '../index.js';

/** Options of `useIdempotency`. */
export interface IdempotencyPluginOptions<Tx = unknown, TContext = Record<string, unknown>> {
  /** The guard from `createGuard({ store })`: it decides, the plugin only translates. */
  guard: Guard<Tx>;
  /**
   * Whose keys these are (SPEC S4): the tenant, account or user, read from the context.
   * Records are unique on (scope, key), so one client's key never replays another's result.
   * Throw (a `GraphQLError`, say) to refuse a request; nothing is stored then (S13).
   * @default one global scope, and a warning when the plugin is created
   */
  scope?: (context: TContext) => string | Promise<string>;
  /**
   * Root mutation fields guarded by name, besides those marked `@idempotent` in SDL or
   * `extensions: { idempotent: ... }` code-first. A name the schema lacks is an error.
   * @default []
   */
  fields?: readonly string[];
  /**
   * Whether a guarded mutation without a key is refused with 400
   * `IDEMPOTENCY_KEY_MISSING` (SPEC S3). A field's own `required` wins over this.
   * @default true
   */
  required?: boolean;
  /**
   * Also put `extensions: { idempotency: { replayed } }` in the body of guarded answers,
   * for clients that cannot read the `Idempotent-Replayed` header (SPEC S9).
   * @default false
   */
  replayedExtension?: boolean;
  /**
   * Declares a GraphQL error final (a declined card): an answer whose errors are all final
   * is stored and replayed Stripe-style instead of freeing the key (SPEC S12). The
   * transaction still rolls back. Only errors raised on purpose (`GraphQLError`s) count:
   * an unexpected error is never stored, whatever this says.
   * @default () => false (every error frees the key for a fresh retry)
   */
  isFinalError?: (error: GraphQLError) => boolean;
  /**
   * The context property where resolvers of a guarded mutation find the transaction:
   * `context.idempotency.tx`. Write business rows through it so that they commit with the
   * stored result, or not at all (SPEC S8). Absent when the mutation runs unguarded.
   * @default 'idempotency'
   */
  contextField?: string;
  /**
   * Reads the `Idempotency-Key` header. The default reads `context.request` (a Fetch
   * `Request`: Yoga) or `context.req` (a Node request); set this for other servers.
   * @default readKeyHeader
   */
  keyHeader?: (context: TContext) => string | null | undefined;
}

/** What a resolver of a guarded mutation finds at `context.idempotency` (see `contextField`). */
export interface IdempotencyContext<Tx = unknown> {
  /** The store's transaction handle (for the Drizzle stores, a Drizzle database). */
  tx: Tx;
  /** The operation's idempotency key, to pass on (to a payment provider, say). Do not log it. */
  key: string;
  /** A short hash of the key (SPEC S26), safe to log. */
  keyHash: string;
  /** The scope the record belongs to. */
  scope: string;
}

/** The scope used when no `scope` option is given. */
export const GLOBAL_SCOPE = 'global';
