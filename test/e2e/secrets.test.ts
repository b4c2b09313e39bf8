/**
 * The demo service never prints the database password: not in the banner, not when
 * DATABASE_URL has the wrong scheme, not when the server is unreachable, not when the URL
 * cannot be parsed at all. Every start-up path is run as a child process and its whole
 * output searched.
 */
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../examples/payments/config.js';
import { startService } from '../../examples/payments/demo/service-process.js';
import { maskPassword, redactUrl } from '../../examples/payments/redact.js';

const PASSWORD = 'Sup3r-Secret-pw';

/** Starts the service with `databaseUrl`, expects it to stop, returns everything it printed. */
async function failedStartOutput(databaseUrl: string): Promise<string> {
  const error = await startService({
    env: { DATABASE_URL: databaseUrl },
    startTimeoutMs: 45_000,
  }).then(
    () => {
      throw new Error('the service started, but it should have refused');
    },
    (reason: unknown) => reason as Error,
  );
  return error.message;
}

describe('DATABASE_URL passwords stay out of the demo output', () => {
  it('a wrong scheme is refused with the URL masked', () => {
    const url = `postgresql+psycopg://app:${PASSWORD}@db.internal:5432/app`;
    expect(() => readConfig({ DATABASE_URL: url })).toThrow(/DATABASE_URL must start with/);
    try {
      readConfig({ DATABASE_URL: url });
    } catch (error) {
      const message = (error as Error).message;
      expect(message).not.toContain(PASSWORD);
      expect(message).toContain('postgresql+psycopg://app:***@db.internal:5432/app');
    }
  });

  it.each([
    ['an ordinary URL', `postgres://app:${PASSWORD}@db:5432/app`, 'postgres://app:***@db:5432/app'],
    [
      'an @ inside the password',
      `postgres://app:${PASSWORD}@x@db/app`,
      'postgres://app:***@db/app',
    ],
    [
      'a password in the query',
      `postgres://db/app?user=app&password=${PASSWORD}`,
      'postgres://db/app?user=app&password=***',
    ],
    ['no scheme', `app:${PASSWORD}@db/app`, 'app:***@db/app'],
    ['a percent-encoded password', 'postgres://app:a%2Fb%40c@db/app', 'postgres://app:***@db/app'],
    ['no password', 'postgres://app@db/app', 'postgres://app@db/app'],
  ])('redactUrl masks %s', (_name, url, masked) => {
    expect(redactUrl(url)).toBe(masked);
  });

  it('maskPassword also catches the password decoded, as a driver may quote it', () => {
    const url = 'postgres://app:a%2Fb%40c@db/app';
    expect(maskPassword('auth failed for a/b@c and a%2Fb%40c', url)).toBe(
      'auth failed for *** and ***',
    );
  });

  it.concurrent.each([
    ['a wrong scheme', `postgresql+psycopg://app:${PASSWORD}@127.0.0.1:1/app`],
    ['an unreachable server', `postgres://app:${PASSWORD}@127.0.0.1:1/app`],
    ['a URL no parser accepts', `postgres://app:${PASSWORD}@[not-a-host/app`],
  ])(
    'the service stops on %s and prints no password',
    async (_name, url) => {
      const output = await failedStartOutput(url);
      expect(output).toMatch(/exited with code 1/);
      expect(output).toContain('payments service failed to start');
      expect(output).not.toContain(PASSWORD);
    },
    60_000,
  );
});
