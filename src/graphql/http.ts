import { type GraphQLSchema, getOperationAST, parse } from 'graphql';
import { sharedHeaderKeyError } from '../core/adapter.js';
import { IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER, RETRY_AFTER_HEADER } from '../core/vocabulary.js';
import { toGraphQLError } from './errors.js';
import { collectGuardedSelections, fragmentsOf, type SchemaGuards } from './fields.js';
import { uncoercedVariables } from './variables.js';

/** The parts of a Fetch request and response these hooks touch. */
interface RequestLike {
  method: string;
  headers: { get(name: string): string | null };
}
interface ResponseLike {
  headers: { get(name: string): string | null; set(name: string, value: string): void };
}

/**
 * SPEC S20: in a batch (Yoga's `batching: true`), one `Idempotency-Key` header for two or
 * more guarded operations cannot say which operation it names. The whole request is
 * refused before anything runs; keys inside each operation's input still work. Without a
 * known schema every mutation counts as guarded.
 *
 * Only for a request that carries the header (`hasKeyHeader`): without it there is nothing
 * to check, and the plugin skips this hook altogether.
 */
export function assertBatchKeys(
  params: unknown,
  schema: GraphQLSchema | undefined,
  findGuards: (schema: GraphQLSchema) => SchemaGuards,
): void {
  if (!Array.isArray(params) || params.length < 2) return;
  let guarded = 0;
  for (const operation of params) {
    if (isGuardedOperation(operation, schema, findGuards)) guarded++;
  }
  if (guarded < 2) return;
  throw toGraphQLError(sharedHeaderKeyError(guarded));
}

/** Whether the request carries the shared `Idempotency-Key` header S20 is about. */
export function hasKeyHeader(request: RequestLike): boolean {
  return request.headers.get(IDEMPOTENCY_KEY_HEADER) !== null;
}

function isGuardedOperation(
  params: unknown,
  schema: GraphQLSchema | undefined,
  findGuards: (schema: GraphQLSchema) => SchemaGuards,
): boolean {
  const { query, operationName, variables } = (params ?? {}) as {
    query?: unknown;
    operationName?: string;
    variables?: Record<string, unknown>;
  };
  if (typeof query !== 'string') return false;
  try {
    const document = parse(query);
    const operation = getOperationAST(document, operationName);
    if (operation?.operation !== 'mutation') return false;
    if (!schema) return true;
    const guards = findGuards(schema);
    const fragments = fragmentsOf(document);
    return (
      collectGuardedSelections(
        schema,
        guards,
        operation,
        fragments,
        uncoercedVariables(variables ?? {}),
      ).length > 0
    );
  } catch {
    // Unparseable: it fails on its own later and runs nothing.
    return false;
  }
}

/**
 * SPEC S21: when the server answered with CORS headers (Yoga's default CORS reflects the
 * preflight's requested headers, a configured list may not), make sure browsers may send
 * `Idempotency-Key` and read `Idempotent-Replayed` and `Retry-After` (which is not one of
 * the CORS-safelisted response headers, so a cross-origin 409 would hide it).
 */
export function extendCors(request: RequestLike, response: ResponseLike): void {
  if (response.headers.get('Access-Control-Allow-Origin') === null) return;
  try {
    appendToken(response, 'Access-Control-Expose-Headers', REPLAYED_HEADER, true);
    appendToken(response, 'Access-Control-Expose-Headers', RETRY_AFTER_HEADER, true);
    if (request.method.toUpperCase() === 'OPTIONS') {
      appendToken(response, 'Access-Control-Allow-Headers', IDEMPOTENCY_KEY_HEADER, false);
    }
  } catch {
    // An immutable response (a plugin returned a fetched one): leave it as it is.
  }
}

function appendToken(
  response: ResponseLike,
  header: string,
  token: string,
  createIfAbsent: boolean,
): void {
  const current = response.headers.get(header);
  if (current === null) {
    if (createIfAbsent) response.headers.set(header, token);
    return;
  }
  const tokens = current.split(',').map((t) => t.trim().toLowerCase());
  if (tokens.includes('*') || tokens.includes(token.toLowerCase())) return;
  response.headers.set(header, `${current}, ${token}`);
}
