import type { ExecuteFunction, Plugin } from '@envelop/core';
import {
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  getOperationAST,
  isSchema,
} from 'graphql';
import { IdempotencyError, rollback } from '../index.js';
import { errorResult, toGraphQLError } from './errors.js';
import { schemaGuardsFinder } from './fields.js';
import { assertBatchKeys, extendCors, REPLAYED_HEADER } from './http.js';
import { readKeyHeader } from './key.js';
import { GLOBAL_SCOPE, type IdempotencyContext, type IdempotencyPluginOptions } from './options.js';
import { type OperationPlan, planOperation } from './plan.js';
import { fromStored, isExpectedError, type StoredResult, toStored } from './replay.js';

type Context = Record<string, unknown>;

/**
 * The hooks Yoga adds to Envelop's, typed structurally so that this package does not
 * depend on graphql-yoga. Plain Envelop servers never call them; everything that matters
 * for correctness happens in `onExecute`.
 */
export interface IdempotencyYogaHooks {
  onRequestParse?(payload: { request: Request }): {
    onRequestParseDone?(payload: { requestParserResult: unknown }): void;
  };
  onResponse?(payload: { request: Request; response: Response }): void;
}

/**
 * The Envelop plugin (also a Yoga plugin) that makes guarded mutations safe to retry.
 *
 * Per mutation operation (SPEC S18): find its guarded root fields, resolve its one key,
 * fingerprint it, and execute it inside `guard.run`, whose transaction handle resolvers
 * find at `context.idempotency.tx`. Queries, subscriptions and unguarded mutations return
 * from `onExecute` after one lookup (S17). Replays are returned from the execute function,
 * so error masking and every other plugin see them like a fresh answer (S9, S18).
 */
export function useIdempotency<Tx = unknown, TContext extends Context = Context>(
  options: IdempotencyPluginOptions<Tx, TContext>,
): Plugin<TContext> & IdempotencyYogaHooks {
  const {
    guard,
    scope: readScope,
    fields = [],
    required = true,
    replayedExtension = false,
    isFinalError = () => false,
    contextField = 'idempotency',
    keyHeader = readKeyHeader as (context: TContext) => string | null | undefined,
  } = options;
  if (!guard) throw new TypeError('useIdempotency: the `guard` option is required.');
  if (!readScope) {
    // SPEC S4: said once, at start-up, not per request.
    console.warn(
      'mutation-guard: useIdempotency has no `scope` option, so all clients share one key space. Pass `scope: (ctx) => ctx.accountId` (say) to keep their keys apart.',
    );
  }
  const findGuards = schemaGuardsFinder(fields);
  const replayedRequests = new WeakSet<object>();
  let knownSchema: GraphQLSchema | undefined;

  async function runGuarded(
    args: ExecutionArgs,
    execute: ExecuteFunction,
    plan: OperationPlan,
  ): Promise<ExecutionResult> {
    const context = args.contextValue as TContext;
    const scope = readScope ? assertScope(await readScope(context)) : GLOBAL_SCOPE;
    let fresh: ExecutionResult | undefined;
    try {
      const { value, replayed } = await guard.run<StoredResult | undefined>({
        scope,
        key: plan.key,
        fingerprint: plan.fingerprint,
        operation: plan.name,
        retention: plan.retentionMs,
        work: async function guardedExecute(tx, { keyHash }) {
          const idempotency: IdempotencyContext<Tx> = { tx, key: plan.key, keyHash, scope };
          (context as Context)[contextField] = idempotency;
          const result = (await execute(args)) as ExecutionResult | AsyncIterable<unknown>;
          if (Symbol.asyncIterator in result) {
            throw new TypeError(
              'mutation-guard: @defer and @stream are not supported on guarded mutations.',
            );
          }
          fresh = result;
          const errors = result.errors ?? [];
          if (errors.length === 0) return toStored(result);
          // S12: roll back; keep (store) the answer only when every error is a declared,
          // expected final error. An unexpected message is never stored.
          const keep = errors.every((error) => isExpectedError(error) && isFinalError(error));
          return rollback(keep ? toStored(result) : undefined, { keep });
        },
      });
      const result = replayed ? fromStored(value ?? {}) : fresh!;
      if (replayed) markReplayed(context);
      return replayedExtension ? withReplayedExtension(result, replayed) : result;
    } catch (error) {
      if (IdempotencyError.is(error)) return errorResult(toGraphQLError(error));
      throw error;
    } finally {
      // The transaction is over: a late resolver must not write through a dead handle.
      delete (context as Context)[contextField];
    }
  }

  function markReplayed(context: unknown): void {
    const request = (context as { request?: object } | null)?.request;
    if (request && typeof request === 'object') replayedRequests.add(request);
  }

  return {
    onSchemaChange({ schema }) {
      if (isSchema(schema)) {
        knownSchema = schema;
        // Fail at start-up, not on the first mutation, if `fields` names a missing field.
        findGuards(schema);
      }
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== 'mutation') return;
      const plan = planOperation({
        args: args as ExecutionArgs,
        operation,
        findGuards,
        header: keyHeader(args.contextValue),
        required,
        limits: guard.options,
      });
      if (plan === undefined) return;
      if ('error' in plan) {
        const { error } = plan;
        // The scope stands for authentication: let it refuse first (401 before a key's 400),
        // as it would have for a request with a valid key. Nothing is stored either way (S13).
        setExecuteFn(async function refuseBeforeRunning(execArgs: ExecutionArgs) {
          if (readScope) await readScope(execArgs.contextValue as TContext);
          return errorResult(error);
        });
        return;
      }
      setExecuteFn((execArgs: ExecutionArgs) => runGuarded(execArgs, executeFn, plan));
    },
    onRequestParse({ request }) {
      return {
        onRequestParseDone({ requestParserResult }) {
          assertBatchKeys(request, requestParserResult, knownSchema, findGuards);
        },
      };
    },
    onResponse({ request, response }) {
      if (replayedRequests.has(request)) response.headers.set(REPLAYED_HEADER, 'true');
      extendCors(request, response);
    },
  };
}

/**
 * A scope that is not a string is a bug in the app's setup, not a store outage (S15): say so
 * (the server logs it; clients see a masked 500) instead of letting the store fail on it.
 */
function assertScope(scope: unknown): string {
  if (typeof scope === 'string') return scope;
  const got = scope === null ? 'null' : typeof scope;
  throw new TypeError(
    `mutation-guard: the \`scope\` option must return a string, but it returned ${got}.`,
  );
}

function withReplayedExtension(result: ExecutionResult, replayed: boolean): ExecutionResult {
  return { ...result, extensions: { ...result.extensions, idempotency: { replayed } } };
}
