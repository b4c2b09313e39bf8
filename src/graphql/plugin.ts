import type { ExecuteFunction, Plugin } from '@envelop/core';
import {
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  getOperationAST,
  isSchema,
} from 'graphql';
import { checkAdapterOptions, scopeOf } from '../core/adapter.js';
import { IdempotencyError, setupError } from '../core/errors.js';
import { rollback } from '../core/rollback.js';
import type { SetupErrorHandler } from '../core/setup-log.js';
import { type IdempotencyContext, REPLAYED_HEADER, readKeyHeader } from '../core/vocabulary.js';
import { errorResult, toGraphQLError } from './errors.js';
import { schemaGuardsFinder } from './fields.js';
import { assertBatchKeys, extendCors, hasKeyHeader } from './http.js';
import type { IdempotencyPluginOptions } from './options.js';
import { type OperationPlan, planOperation } from './plan.js';
import { fromStored, isExpectedError, type StoredResult, toStored } from './replay.js';

type Context = Record<string, unknown>;

/** What `onRequestParse` answers for a request with nothing to check: one shared object. */
const NO_PARSE_HOOKS = Object.freeze({});

/** The part of Yoga's `logger` the plugin uses. */
export interface YogaLoggerLike {
  error(...args: unknown[]): void;
}

/**
 * The hooks Yoga adds to Envelop's, typed structurally so that this package does not
 * depend on graphql-yoga. Plain Envelop servers never call them; everything that matters
 * for correctness happens in `onExecute`.
 */
export interface IdempotencyYogaHooks {
  onYogaInit?(payload: { yoga: { logger: YogaLoggerLike } }): void;
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
export function useIdempotency<Tx = unknown, TContext extends Context = Context>({
  guard,
  scope,
  required = true,
  isFinalError = () => false,
  retention,
  keyHeader = readKeyHeader,
  fields = [],
  replayedExtension = false,
  contextField = 'idempotency',
}: IdempotencyPluginOptions<Tx, TContext>): Plugin<TContext> & IdempotencyYogaHooks {
  checkAdapterOptions('useIdempotency()', { guard, scope });
  const findGuards = schemaGuardsFinder(fields);
  const replayedRequests = new WeakSet<object>();
  let knownSchema: GraphQLSchema | undefined;
  /**
   * Yoga's logger, once Yoga has started: a store that is not set up is reported there (the
   * guard's `onSetupError`, when it has one, wins). A plain Envelop server has none.
   */
  let onSetupError: SetupErrorHandler | undefined;

  async function runGuarded(
    args: ExecutionArgs,
    execute: ExecuteFunction,
    plan: OperationPlan,
  ): Promise<ExecutionResult> {
    const context = args.contextValue as TContext;
    const requestScope = await scopeOf(scope, context);
    let fresh: ExecutionResult | undefined;
    try {
      const { value, replayed } = await guard.run<StoredResult | undefined>({
        scope: requestScope,
        key: plan.key,
        fingerprint: plan.fingerprint,
        operation: plan.name,
        retention: plan.retentionMs,
        onSetupError,
        work: async function guardedExecute(tx, { keyHash }) {
          const idempotency: IdempotencyContext<Tx> = {
            tx,
            key: plan.key,
            keyHash,
            scope: requestScope,
          };
          (context as Context)[contextField] = idempotency;
          const result = (await execute(args)) as ExecutionResult | AsyncIterable<unknown>;
          if (Symbol.asyncIterator in result) {
            throw setupError('@defer and @stream are not supported on guarded mutations.');
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
    onYogaInit({ yoga }) {
      const { logger } = yoga;
      onSetupError = (message) => logger.error(message);
    },
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
        header: keyHeader(args.contextValue as TContext),
        required,
        retention,
        limits: guard.options,
      });
      if (plan === undefined) return;
      if ('error' in plan) {
        const { error } = plan;
        // The scope stands for authentication: let it refuse first (401 before a key's 400),
        // as it would have for a request with a valid key. Nothing is stored either way (S13).
        setExecuteFn(async function refuseBeforeRunning(execArgs: ExecutionArgs) {
          if (scope) await scope(execArgs.contextValue as TContext);
          return errorResult(error);
        });
        return;
      }
      setExecuteFn((execArgs: ExecutionArgs) => runGuarded(execArgs, executeFn, plan));
    },
    onRequestParse({ request }) {
      // S20 is about one shared header: without it there is nothing to check, and a plain
      // query (S17) gets no per-request hook.
      if (!hasKeyHeader(request)) return NO_PARSE_HOOKS;
      return {
        onRequestParseDone({ requestParserResult }) {
          assertBatchKeys(requestParserResult, knownSchema, findGuards);
        },
      };
    },
    onResponse({ request, response }) {
      if (replayedRequests.has(request)) response.headers.set(REPLAYED_HEADER, 'true');
      extendCors(request, response);
    },
  };
}

function withReplayedExtension(result: ExecutionResult, replayed: boolean): ExecutionResult {
  return { ...result, extensions: { ...result.extensions, idempotency: { replayed } } };
}
