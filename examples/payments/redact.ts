/**
 * Database URLs without their passwords, for everything the demo prints: the start-up line,
 * configuration errors and driver errors. Written by hand rather than with `new URL()`,
 * because the URLs that most need masking are the ones a URL parser refuses.
 */

const MASK = '***';

/** `url` with the password (between `user:` and the last `@`, or `password=`) masked. */
export function redactUrl(url: string): string {
  let masked = url.replace(/([?&]password=)[^&#]*/gi, `$1${MASK}`);
  const span = passwordSpan(masked);
  if (span) masked = masked.slice(0, span.start) + MASK + masked.slice(span.end);
  return masked;
}

/** `text` (an error message, say) with every form of `url`'s password in it masked. */
export function maskPassword(text: string, url: string | undefined): string {
  if (!url) return text;
  const secrets = new Set<string>();
  const span = passwordSpan(url);
  if (span) secrets.add(url.slice(span.start, span.end));
  for (const match of url.matchAll(/[?&]password=([^&#]*)/gi)) secrets.add(match[1] ?? '');
  let masked = text;
  for (const secret of secrets) {
    if (!secret) continue;
    for (const form of [secret, decoded(secret)]) masked = masked.replaceAll(form, MASK);
  }
  return masked;
}

/**
 * Where the password of `scheme://user:password@host` (or `user:password@host`) lies. The
 * last `@` ends it, so an unencoded `@` inside the password is masked too.
 */
function passwordSpan(url: string): { start: number; end: number } | undefined {
  const scheme = url.indexOf('://');
  const from = scheme === -1 ? 0 : scheme + 3;
  const at = url.lastIndexOf('@');
  if (at <= from) return undefined;
  const colon = url.indexOf(':', from);
  if (colon === -1 || colon > at) return undefined;
  return { start: colon + 1, end: at };
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
