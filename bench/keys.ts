/** Idempotency keys for one run: distinct across runs, so nothing replays by accident. */
import { randomBytes } from 'node:crypto';

const run = randomBytes(4).toString('hex');
let counter = 0;

/** A key never used before in this run (or any other). */
export function freshKey(label: string): string {
  counter++;
  return `${label}-${run}-${counter}`;
}
