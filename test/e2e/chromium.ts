/**
 * Debian's headless Chromium for the browser tests, driven by playwright-core (which downloads
 * no browser of its own). `.ci/chromium.sh` installs it in CI. Without it the browser tests
 * skip and say why, except under CI=true, where a missing browser fails the run.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function chromiumAvailability(): { available: boolean; skipReason: string | undefined } {
  if (existsSync(CHROMIUM_PATH)) return { available: true, skipReason: undefined };
  if (process.env.CI === 'true') {
    throw new Error(
      `CI=true requires Chromium at ${CHROMIUM_PATH} (.ci/chromium.sh installs it), but it is missing.`,
    );
  }
  const reason = `skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`;
  console.warn(`[test/e2e/chromium] ${reason}`);
  return { available: false, skipReason: reason };
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    // CI runs as root, where Chromium refuses to start with its sandbox on.
    args: ['--no-sandbox'],
  });
}
