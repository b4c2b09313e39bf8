/**
 * Reading the errors of the store's merged completions (pool-transaction.ts on a node-postgres
 * Pool, store.ts on postgres.js): the completing query divides by its answer, `1 / done::int`,
 * so a completion that wrote nothing fails with division_by_zero before COMMIT can run.
 */

/** SQLSTATE 22012: what a merged completion that wrote nothing raises. */
export const DIVISION_BY_ZERO = '22012';
