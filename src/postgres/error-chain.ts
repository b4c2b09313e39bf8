/**
 * The errors one failure carries, outermost first. Drizzle (since 0.44) wraps the driver's
 * error as `cause`, and the store's own errors wrap Drizzle's, so the SQLSTATE and the
 * driver's message are somewhere down the chain. Every reader of them walks it here: bounded,
 * and stopping at a link seen before, so that a cause pointing back up cannot loop.
 */

/** More links than any wrapping here makes (ours, Drizzle's, the driver's). */
const MAX_LINKS = 8;

/** `error` and its causes, outermost first: objects only, at most `MAX_LINKS`. */
export function causeChain(error: unknown): object[] {
  const chain: object[] = [];
  let link = error;
  while (link !== null && typeof link === 'object' && chain.length < MAX_LINKS) {
    if (chain.includes(link)) break;
    chain.push(link);
    link = (link as { cause?: unknown }).cause;
  }
  return chain;
}

/** The SQLSTATE (or driver code) a link carries, if any. */
export function codeOf(link: object): unknown {
  return (link as { code?: unknown }).code;
}

/** Whether `error`, or an error on its cause chain, carries one of the codes. */
export function hasCode(error: unknown, ...codes: string[]): boolean {
  return causeChain(error).some((link) => codes.includes(codeOf(link) as string));
}

/**
 * The first error on `error`'s cause chain that carries a code (the driver's), or `error`
 * itself: a wrapper's message (Drizzle's repeats the statement, literals and all) stays out.
 */
export function driverErrorOf(error: unknown): unknown {
  return causeChain(error).find((link) => typeof codeOf(link) === 'string') ?? error;
}
