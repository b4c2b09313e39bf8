import {
  DirectiveLocation,
  GraphQLBoolean,
  GraphQLDirective,
  GraphQLInt,
  GraphQLString,
} from 'graphql';

/** The one name both uses of the directive share. */
export const IDEMPOTENT_DIRECTIVE = 'idempotent';

/**
 * One definition serves both uses, because GraphQL allows one definition per directive name:
 *
 * - on a schema field (`FIELD_DEFINITION`) it marks a root mutation field as guarded;
 *   `required` (default true, SPEC S3) and `retentionSeconds` (SPEC S14) apply there;
 * - on a field in an operation (`FIELD`) it carries the client's key, as Shopify does:
 *   `mutation { pay(amount: 5) @idempotent(key: "k1") { id } }` (SPEC S1). There only `key`
 *   counts: a client cannot switch a guard off or change its retention.
 *
 * `key` on a schema field is ignored. `required` has no default in the definition so that
 * an operation writing `@idempotent(key: ...)` does not look like it set `required`; a
 * field marked `@idempotent` without it is required.
 *
 * The retention is the one duration given in seconds, and its name says so: every
 * TypeScript option is in milliseconds, but a GraphQL `Int` is 32 bits, so milliseconds
 * would stop at about 24.8 days. `retentionSeconds: 3600` is `retention: 3_600_000` in the
 * plugin's and a code-first field's options.
 */
export const idempotentDirectiveTypeDefs = /* GraphQL */ `
"""
On a root mutation field: the mutation is guarded by an idempotency key (mutation-guard).
On a field in an operation: \`key\` is the client's idempotency key for that mutation.
"""
directive @idempotent(
  "The idempotency key (operations only)."
  key: String
  "Whether a request without a key is refused (true, the default) or runs unguarded."
  required: Boolean
  "How long, in seconds, the stored result is replayed. Defaults to the plugin's, else the guard's, retention."
  retentionSeconds: Int
) on FIELD_DEFINITION | FIELD
`;

/** The same directive for code-first schemas: add it to `new GraphQLSchema({ directives })`. */
export const idempotentDirective = new GraphQLDirective({
  name: IDEMPOTENT_DIRECTIVE,
  description:
    'On a root mutation field: the mutation is guarded by an idempotency key (mutation-guard). On a field in an operation: `key` is the client idempotency key for that mutation.',
  locations: [DirectiveLocation.FIELD_DEFINITION, DirectiveLocation.FIELD],
  args: {
    key: { type: GraphQLString, description: 'The idempotency key (operations only).' },
    required: {
      type: GraphQLBoolean,
      description:
        'Whether a request without a key is refused (true, the default) or runs unguarded.',
    },
    retentionSeconds: {
      type: GraphQLInt,
      description:
        'How long, in seconds, the stored result is replayed. Defaults to the plugin, else the guard, retention.',
    },
  },
});
