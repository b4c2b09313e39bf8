/**
 * The page at `/` pays with the fetch client in a real browser: Debian's Chromium, headless,
 * driven by playwright-core pointed at that executable (nothing downloads a browser). One
 * answer dropped after the service committed: one payment, and the page shows the first
 * answer. And an intent that outlives a page reload resumes with its own key.
 *
 * Without Chromium this file skips and says why; under CI=true it never skips.
 */

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPayments } from '../e2e/http.js';
import type { Exchange } from '../support/http-fault-proxy.js';
import { paymentIn } from './contract.js';
import { type Service, startService } from './service.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI === 'true') {
  throw new Error(`CI=true needs Chromium at ${CHROMIUM} (.ci/chromium.sh installs it).`);
}
const skipReason = available ? '' : ` (skipped: no Chromium at ${CHROMIUM}; set CHROMIUM_PATH)`;

describe.skipIf(!available)(`the payment page in headless Chromium${skipReason}`, () => {
  let service: Service;
  let browser: Browser;
  beforeAll(async () => {
    service = await startService('sqlite');
    // Chromium re-sends a POST by itself when a reused connection dies before the answer;
    // fresh connections leave the retrying to the page's fetch client, which is under test.
    service.proxy.setKeepAlive(false);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  const payments = (): Exchange[] =>
    service.proxy.exchanges.filter(
      (e) => e.request.method === 'POST' && e.request.path === '/graphql',
    );

  async function openPage(account: string): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`${service.proxy.url}/`);
    await page.fill('input[name=account]', account);
    return page;
  }

  it('S28/S29: an answer dropped after the commit is retried with the same key: one payment, and the page shows the first answer', async () => {
    const account = `acct_browser_${randomBytes(4).toString('hex')}`;
    const before = payments().length;
    service.proxy.setFaults((request) =>
      request.method === 'POST' && payments().length === before
        ? { kind: 'drop-response' }
        : { kind: 'pass' },
    );
    const page = await openPage(account);
    await page.click('button[type=submit]');
    await page.waitForSelector('#payment:not([hidden])', { timeout: 15_000 });

    const sent = payments().slice(before);
    expect(sent.map((e) => [e.fault, e.status, e.replayed, e.delivered])).toEqual([
      ['drop-response', 200, false, false],
      ['pass', 200, true, true],
    ]);
    expect(sent[0]!.request.headers['idempotency-key']).toBe(
      sent[1]!.request.headers['idempotency-key'],
    );
    const first = paymentIn(sent[0]!);
    expect(await page.getAttribute('#payment', 'data-payment-id')).toBe(first.id);
    expect(await page.getAttribute('#payment', 'data-replayed')).toBe('true');
    expect(JSON.parse((await page.textContent('#payment')) ?? '')).toEqual(first);
    // The retry was the fetch client's (its onRetry wrote the log), not the browser's.
    expect(await page.textContent('#log')).toMatch(/attempt 1 failed \(network\)/);
    expect(await listPayments(service.direct, account)).toEqual([first]);
    await page.close();
  });

  it('S28: an intent still unanswered when the page reloads resumes with its own key and is paid once', async () => {
    const account = `acct_browser_${randomBytes(4).toString('hex')}`;
    const before = payments().length;
    // Every answer is lost until the page gives up: the outcome is unknown to the page.
    service.proxy.setFaults((request) =>
      request.method === 'POST' ? { kind: 'drop-response' } : { kind: 'pass' },
    );
    const page = await openPage(account);
    await page.click('button[type=submit]');
    await page.waitForFunction(
      () => document.querySelector('#status')?.textContent?.startsWith('No answer yet'),
      undefined,
      { timeout: 20_000 },
    );
    service.proxy.setFaults(() => ({ kind: 'pass' }));
    await page.reload();
    await page.click('#resume');
    await page.waitForSelector('#payment:not([hidden])', { timeout: 15_000 });

    const sent = payments().slice(before);
    expect(sent.length).toBeGreaterThan(2);
    expect(new Set(sent.map((e) => e.request.headers['idempotency-key'])).size).toBe(1);
    const fresh = sent.filter((e) => e.status === 200 && !e.replayed);
    expect(fresh).toHaveLength(1);
    expect(await page.getAttribute('#payment', 'data-payment-id')).toBe(paymentIn(fresh[0]!).id);
    expect(await listPayments(service.direct, account)).toHaveLength(1);
    await page.close();
  });
});
