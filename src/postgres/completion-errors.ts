/**
 * Reading the errors of the store's merged completions (pool-transaction.ts on a node-postgres
 * Pool, store.ts on postgres.js): the completing query divides by its answer, `1 / done::int`,
 * so a completion that wrote nothing fails with division_by_zero before COMMIT can run.
 */

/** SQLSTATE 22012: what a merged completion that wrote nothing raises. */
export const DIVISION_BY_ZERO = '22012';

/** Whether `error`, or an error on its cause chain, carries the SQLSTATE `code`. */
export function hasCode(error: unknown, code: string): boolean {
  return causes(error).some((e) => (e as { code?: unknown }).code === code);
}

/**
 * The first error on `error`'s cause chain that carries a code (the driver's), or `error`
 * itself: a wrapper's message (Drizzle's repeats the statement, literals and all) stays out.
 */
export function driverErrorOf(error: unknown): unknown {
  return causes(error).find((e) => typeof (e as { code?: unknown }).code === 'string') ?? error;
}

function causes(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let e: unknown = error; e instanceof Error && chain.length < 8; e = e.cause) chain.push(e);
  return chain;
}
