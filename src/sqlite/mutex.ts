/**
 * A first-in, first-out async lock: a promise chain. The SQLite store has one connection,
 * and any statement run on it while a transaction is open silently joins that transaction.
 * So every store operation, and each guarded transaction including the awaits of the work
 * inside it, runs alone (SPEC S23).
 */
export class Mutex {
  /** Settles when the last queued task has finished, whether it succeeded or failed. */
  #tail: Promise<unknown> = Promise.resolve();
  /** Tasks queued or running. */
  #pending = 0;

  /** True while a task runs or waits: a new task would queue behind it. */
  get busy(): boolean {
    return this.#pending > 0;
  }

  /** Runs `task` after every task queued before it has settled; resolves to its result. */
  run<T>(task: () => T | Promise<T>): Promise<T> {
    this.#pending++;
    // Counted out before the caller sees the outcome, so that its next step finds us idle.
    const done = () => {
      this.#pending--;
    };
    const result = this.#tail.then(task).then(
      (value) => {
        done();
        return value;
      },
      (error: unknown) => {
        done();
        throw error;
      },
    );
    // One task's failure is its caller's business; the next task runs regardless.
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
