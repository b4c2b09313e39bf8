/**
 * A stand-in for authentication: `Authorization: Bearer <accountId>` names the account, and
 * the account is the idempotency scope: the principal whose payment an answer holds. A
 * replay skips the resolvers (and any permission check in them), so the scope must be no
 * wider than who may see the answer; with one account per scope, one account's keys never
 * replay another's.
 *
 * Mutations without an account are refused with 401 BEFORE the idempotency guard sees them,
 * so nothing is claimed or stored for them.
 */
import type { Plugin } from '@envelop/core';
import { GraphQLError, getOperationAST } from 'graphql';

/** Visible ASCII, as for keys: an account id is also part of the record's primary key. */
const ACCOUNT_ID = /^[\x21-\x7e]{1,128}$/;

/** The account named by an `Authorization` header's value, or undefined. */
export function accountFromAuthorization(header: string | null | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  const account = match?.[1];
  return account !== undefined && ACCOUNT_ID.test(account) ? account : undefined;
}

export const UNAUTHENTICATED_MESSAGE =
  'Send "Authorization: Bearer <accountId>" to say which account this is for.';

/** The GraphQL 401: `extensions.http` becomes the response's status and header in Yoga. */
export function unauthenticated(): GraphQLError {
  return new GraphQLError(UNAUTHENTICATED_MESSAGE, {
    extensions: {
      code: 'UNAUTHENTICATED',
      http: { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } },
    },
  });
}

/**
 * Refuses mutations of unauthenticated requests. It must come before `useIdempotency` in the
 * plugin list: Envelop runs `onExecute` hooks in order and stops at the first that sets a
 * result, so the guard never runs for these requests (and a missing key does not mask the
 * missing account with a 400).
 */
export function useRequireAccount(): Plugin<{ accountId?: string | undefined }> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== 'mutation') return;
      if (args.contextValue.accountId) return;
      setResultAndStopExecution({ errors: [unauthenticated()] });
    },
  };
}
