/**
 * GraphiQL at /graphql works without the internet: the page comes from the installed
 * @graphql-yoga/render-graphiql, and a real (headless) browser that may reach nothing but
 * the service renders it and runs the prefilled payment. Run twice, the second answer is the
 * replay: the same payment, with Idempotent-Replayed: true.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startService } from '../../examples/payments/demo/service-process.js';
import { chromiumAvailability, launchChromium } from './chromium.js';

const chromium = chromiumAvailability();

describe.skipIf(!chromium.available)(
  `GraphiQL in a browser, offline ${chromium.skipReason ?? ''}`,
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'mutation-guard-graphiql-'));
    let service: ServiceProcess | undefined;
    let browser: Browser | undefined;

    beforeAll(async () => {
      [service, browser] = await Promise.all([
        startService({ env: { DATABASE_URL: undefined, SQLITE_PATH: join(dir, 'p.sqlite') } }),
        launchChromium(),
      ]);
    }, 90_000);
    afterAll(async () => {
      await browser?.close();
      await service?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('S9: renders with no request leaving the machine, and the prefilled payment run twice is replayed', async () => {
      const page = await browser!.newPage();
      const origin = new URL(service!.url).origin;
      const blocked: string[] = [];
      // Offline: only the service itself (and the page's own blob:/data: URLs) answer.
      await page.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith(`${origin}/`)) return route.continue();
        blocked.push(url);
        return route.abort('internetdisconnected');
      });

      await page.goto(`${origin}/graphql`);
      const run = page.locator('.graphiql-execute-button');
      await run.waitFor({ timeout: 60_000 });
      await expect
        .poll(() => page.locator('.graphiql-query-editor').textContent())
        .toContain('createPayment');

      const answers = [];
      for (let i = 0; i < 2; i++) {
        const response = page.waitForResponse(
          (r) => r.url() === `${origin}/graphql` && r.request().method() === 'POST',
        );
        await run.click();
        const answer = await response;
        const body = await answer.json();
        // What the page shows: the payment of this answer.
        await expect
          .poll(() => page.locator('.graphiql-response').textContent())
          .toContain(body.data.createPayment.id);
        answers.push({
          status: answer.status(),
          replayed: answer.headers()['idempotent-replayed'],
          payment: body.data.createPayment,
        });
      }

      expect(answers[0]).toMatchObject({ status: 200, replayed: undefined });
      expect(answers[1]).toMatchObject({ status: 200, replayed: 'true' });
      expect(answers[1]!.payment).toEqual(answers[0]!.payment);
      expect(blocked).toEqual([]);
      await page.close();
    }, 90_000);
  },
);
