/**
 * SPEC S26: what a user logs from our errors carries no raw key and no stored result. A
 * store failure reaches the guard as the driver's error, and drivers are generous: Drizzle's
 * "Failed query: ... params: ..." lists every bound parameter (the key, the serialized
 * result), pg's `detail` repeats key values, postgres.js keeps `parameters` on the error.
 * So the guard never hands that error on; it hands on a `StoreFailure` that keeps what an
 * operator needs (the SQLSTATE or driver code, the error classes, the messages without their
 * parameters) and nothing else: no `cause`, no driver properties, no parameter lists.
 */

import { StoreSetupError } from '../store/setup-error.js';
import { hasBrand } from './errors.js';

const brand = Symbol.for('mutation-guard.StoreFailure');

/** How many links of a `cause` chain are read: drivers wrap once or twice. */
const MAX_CHAIN = 5;
/** Messages are cut to this many characters (a failed query's SQL can be long). */
const MAX_MESSAGE = 500;
/** A setup error's message is the store's own (no SQL): kept whole up to this length. */
const MAX_SETUP_REASON = 2000;
const REDACTED = '[redacted]';

export class StoreFailure extends Error {
  override readonly name = 'StoreFailure';
  /** The driver's code: a SQLSTATE (`23514`), `SQLITE_CONSTRAINT_CHECK`, `ECONNREFUSED`... */
  readonly code: string | undefined;
  /** The classes of the original error and its causes, outermost first. */
  readonly errorClasses: readonly string[];
  /**
   * When the store is not set up (a `StoreSetupError` on the chain: a table, function or
   * column missing), that error's message, scrubbed as the rest: what is missing and the fix.
   */
  readonly setupReason: string | undefined;
  readonly [brand] = true;

  constructor(
    message: string,
    code: string | undefined,
    errorClasses: readonly string[],
    setupReason?: string,
  ) {
    super(message);
    this.code = code;
    this.errorClasses = errorClasses;
    this.setupReason = setupReason;
  }

  static is(value: unknown): value is StoreFailure {
    return hasBrand(value, brand);
  }
}

/**
 * A `StoreFailure` standing for `error`, with every occurrence of each secret (the raw key,
 * the serialized result, also in their JSON-escaped forms) replaced by `[redacted]`.
 */
export function redactStoreError(error: unknown, secrets: readonly string[]): StoreFailure {
  const chain = causeChain(error);
  const scrub = scrubber(secrets);
  const classes = chain.map(classOf);
  const messages = chain.map((link) => `${classOf(link)}: ${scrub(messageOf(link))}`);
  const code = chain.map(codeOf).find((c) => c !== undefined);
  const setup = chain.find((link) => StoreSetupError.is(link)) as StoreSetupError | undefined;
  const setupReason = setup && scrub(setup.message).slice(0, MAX_SETUP_REASON);
  const failure = new StoreFailure(messages.join('; caused by '), code, classes, setupReason);
  // Keep the driver's stack frames (they say where it failed), not its first lines (the
  // message, with the parameters).
  const frames = stackFrames(chain[0]);
  if (frames) failure.stack = `StoreFailure: ${failure.message}\n${frames}`;
  return failure;
}

function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let link: unknown = error;
  while (link !== undefined && link !== null && chain.length < MAX_CHAIN) {
    if (chain.includes(link)) break;
    chain.push(link);
    link = (link as { cause?: unknown }).cause;
    if (typeof link !== 'object') break;
  }
  return chain;
}

function classOf(value: unknown): string {
  if (value instanceof Error) {
    const ctor = value.constructor?.name;
    return ctor && ctor !== 'Error' ? ctor : value.name || 'Error';
  }
  return typeof value;
}

/** The message without a parameter list (Drizzle) and cut to size; never a `detail`. */
function messageOf(value: unknown): string {
  const raw = value instanceof Error ? value.message : String(value);
  const params = raw.search(/\n\s*params:/i);
  const kept = params === -1 ? raw : `${raw.slice(0, params)} (parameters hidden)`;
  return kept.length > MAX_MESSAGE ? `${kept.slice(0, MAX_MESSAGE)}...` : kept;
}

function codeOf(value: unknown): string | undefined {
  const code = (value as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[\w.-]{1,64}$/.test(code) ? code : undefined;
}

function stackFrames(value: unknown): string | undefined {
  const stack = value instanceof Error ? value.stack : undefined;
  if (!stack) return undefined;
  const frames = stack.split('\n').filter((line) => /^\s+at /.test(line));
  return frames.length > 0 ? frames.join('\n') : undefined;
}

function scrubber(secrets: readonly string[]): (text: string) => string {
  const needles = new Set<string>();
  for (const secret of secrets) {
    if (!secret) continue;
    needles.add(secret);
    // As a JSON string (Drizzle prints parameters that way), and escaped once more.
    const once = JSON.stringify(secret).slice(1, -1);
    needles.add(once);
    needles.add(JSON.stringify(once).slice(1, -1));
  }
  // Longest first, so that a secret containing another is removed whole.
  const ordered = [...needles].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const needle of ordered) out = out.split(needle).join(REDACTED);
    return out;
  };
}
