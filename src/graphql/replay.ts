import {
  type ExecutionResult,
  GraphQLError,
  type GraphQLFormattedError,
  Source,
  type SourceLocation,
} from 'graphql';

/**
 * The part of an execution result that is stored and replayed (SPEC S9): `data` and the
 * errors as clients see them. Extensions added by other plugins (tracing, cost) describe
 * one execution and are not replayed.
 */
export interface StoredResult {
  data?: Record<string, unknown> | null;
  errors?: GraphQLFormattedError[];
}

export function toStored(result: ExecutionResult): StoredResult {
  const stored: StoredResult = {};
  if ('data' in result) stored.data = result.data ?? null;
  if (result.errors?.length) {
    stored.errors = result.errors.map((error) => withoutHeaders(error.toJSON()));
  }
  return stored;
}

/**
 * An error's `extensions.http.headers` belong to the response that carried it (a
 * `Set-Cookie` for its caller, say); a replay answers someone else, possibly another user of
 * the scope. SPEC S9 replays the status, never stored response headers: they are dropped
 * before storing, and again on replay for records stored before this rule.
 */
function withoutHeaders(error: GraphQLFormattedError): GraphQLFormattedError {
  const http = error.extensions?.http as { headers?: unknown } | undefined;
  if (!http || typeof http !== 'object' || !('headers' in http)) return error;
  const { headers: _dropped, ...rest } = http;
  return { ...error, extensions: { ...error.extensions, http: rest } };
}

/**
 * Turns a stored result back into an execution result whose errors are real
 * `GraphQLError`s, so that the server's error masking and other plugins treat a replay as
 * they treated the first answer. Locations are restored as stored: a retry whose text
 * differs only in layout has other positions, yet must get the first answer exactly.
 * (Lines and columns below 1 cannot come from graphql-js and are not expected.)
 */
export function fromStored(stored: StoredResult): ExecutionResult {
  // Property order as graphql-js builds results (errors first), so bodies match byte for byte.
  const result: ExecutionResult = {};
  if (stored.errors) result.errors = stored.errors.map((error) => toError(withoutHeaders(error)));
  if ('data' in stored) result.data = stored.data ?? null;
  return result;
}

function toError(formatted: GraphQLFormattedError): GraphQLError {
  return new GraphQLError(formatted.message, {
    path: formatted.path,
    extensions: formatted.extensions,
    ...(formatted.locations?.length ? sourceAt(formatted.locations) : {}),
  });
}

/**
 * graphql-js derives `locations` from a source and offsets, and servers rebuild errors from
 * those (Yoga does, to strip internals), so a stored location can only survive as a source:
 * a blank text with a character at each stored line and column.
 */
function sourceAt(locations: readonly SourceLocation[]): { source: Source; positions: number[] } {
  const widths: number[] = [];
  for (const { line, column } of locations) {
    for (let i = widths.length; i < line; i++) widths.push(0);
    widths[line - 1] = Math.max(widths[line - 1]!, column);
  }
  const starts: number[] = [];
  let offset = 0;
  for (const width of widths) {
    starts.push(offset);
    offset += width + 1;
  }
  return {
    source: new Source(widths.map((width) => ' '.repeat(width)).join('\n')),
    positions: locations.map(({ line, column }) => starts[line - 1]! + column - 1),
  };
}

/**
 * True for errors a server shows as they are: GraphQLErrors raised on purpose, not wrapped
 * around an unexpected exception (the rule Yoga's and Envelop's masking use). Only such
 * errors may be stored (SPEC S12): a stored error is replayed as an expected one, so an
 * unexpected message stored once would bypass masking on every replay.
 */
export function isExpectedError(error: GraphQLError): boolean {
  if (error.extensions?.unexpected === true) return false;
  const original = error.originalError;
  if (original == null) return true;
  return original instanceof GraphQLError && isExpectedError(original);
}
