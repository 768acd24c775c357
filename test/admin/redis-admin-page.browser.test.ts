import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import {
  createLockBackend,
  DistributedLockAdminModule,
  DistributedLockModule,
  LockEngine,
  LockService,
  type Lock,
} from '../../lib/index.js';
import { RedisServer } from '../harness/redis-server.js';
import { baseUrl, startHttpApp } from '../nest/http-platform.js';
import { collectConsoleErrors, launchChromium, overflows } from './browser-kit.js';

/** `ADMIN_SCREENSHOTS=1` writes the screenshots of docs/operations.md (Redis's fences, as in production). */
const SCREENSHOTS =
  process.env.ADMIN_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../docs/images/', import.meta.url)) : undefined;
const allow = { canActivate: () => true };

/** How the page shows one holder: its parts' text and how many characters of each can be seen. */
interface ShownHolder {
  instance: string;
  label: string;
  fence: string;
  /** Characters of the instance and the label that fit in their boxes (their whole length when not cut). */
  instanceChars: number;
  labelChars: number;
  /** The fence is inside its cell, not cut off by it. */
  fenceShown: boolean;
}

/** Runs in the page: every holder of the list's rows, with how much of each part can be read. */
function shownHolders(): ShownHolder[] {
  type Box = { left: number; right: number };
  type Element = {
    textContent: string | null;
    clientWidth: number;
    scrollWidth: number;
    querySelector(selector: string): Element | null;
    closest(selector: string): Element | null;
    getBoundingClientRect(): Box;
  };
  const page = globalThis as unknown as {
    document: {
      querySelectorAll(selector: string): Iterable<Element>;
      createElement(tag: string): {
        getContext(kind: string): { font: string; measureText(text: string): { width: number } };
      };
    };
    getComputedStyle(node: Element): { font: string };
  };
  const canvas = page.document.createElement('canvas').getContext('2d');
  // How many leading characters of the element's text fit in the width it is given.
  const charsShown = (element: Element | null): number => {
    if (!element) return 0;
    const text = element.textContent ?? '';
    if (element.scrollWidth <= element.clientWidth) return text.length;
    canvas.font = page.getComputedStyle(element).font;
    let shown = 0;
    while (shown < text.length && canvas.measureText(`${text.slice(0, shown + 1)}…`).width <= element.clientWidth)
      shown++;
    return shown;
  };
  return [...page.document.querySelectorAll('#locks tbody td.c-holders li')].map((item) => {
    const fence = item.querySelector('.fence');
    const cell = item.closest('td')!.getBoundingClientRect();
    const box = fence?.getBoundingClientRect();
    return {
      instance: item.querySelector('.inst')?.textContent ?? '',
      label: item.querySelector('.label')?.textContent ?? '',
      fence: fence?.textContent ?? '',
      instanceChars: charsShown(item.querySelector('.inst')),
      labelChars: charsShown(item.querySelector('.label')),
      fenceShown: box !== undefined && box.left >= cell.left && box.right <= cell.right,
    };
  });
}

let browser: Browser;
let redis: RedisServer;
beforeAll(async () => {
  [browser, redis] = await Promise.all([launchChromium(), RedisServer.start()]);
}, 30_000);
afterAll(async () => {
  await browser?.close();
  await redis?.stop();
});

describe('the admin page with Redis-sized fences (16 digits)', () => {
  let app: INestApplication;
  let web2: LockEngine;
  let page: Page;
  let consoleErrors: string[];
  const held: Lock[] = [];

  beforeAll(async () => {
    app = await startHttpApp('express', {
      imports: [
        DistributedLockModule.forRoot({ backend: { type: 'redis', url: redis.url }, instance: 'billing-api-1' }),
        DistributedLockAdminModule.register({ guards: [allow], releaseGuards: [allow] }),
      ],
    });
    const locks = app.get(LockService);
    web2 = new LockEngine(await createLockBackend({ type: 'redis', url: redis.url }), { instance: 'billing-api-2' });
    held.push(await web2.acquire('orders:1042', { label: 'shipping order 1042 for ACME' }));
    held.push(await locks.acquire('reports:nightly', { label: 'nightly report 2026-11-26' }));
    held.push(await locks.acquire('catalog:prices', { mode: 'read', label: 'price export' }));
    held.push(await web2.acquire('catalog:prices', { mode: 'read', label: 'search reindex' }));
    for (const engine of [locks, locks, web2])
      held.push(await engine.acquire('pool:gpu', { permits: 3, label: 'render job' }));
    // Some waiting and a timeout on this instance, for the hot keys panel, and a waiter in the queue.
    const busy = await web2.acquire('invoices:2026-11', { label: 'monthly invoices' });
    const waited = locks.acquire('invoices:2026-11', { label: 'invoice retry', waitMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 300)); // the wait being measured, not an event stood in for
    await busy.release();
    held.push(await waited);
    await expect(locks.acquire('orders:1042', { waitMs: 200 })).rejects.toThrow();
    held.push(await locks.acquire('emails:digest', { label: 'daily digest' }));
    held.push(
      await web2.acquire('tenant:eu-west:invoices:2026-11:batch-0042', {
        label: 'monthly invoice run, batch 42 of 64, tenant eu-west',
      }),
    );
    const queued = web2.acquire('reports:nightly', { label: 'report retry', waitMs: 60_000, fair: true });
    queued.then(
      (lock) => lock.release(),
      () => undefined,
    ); // granted when the test releases its holder
    expect(held.filter((lock) => lock.fence !== undefined).every((lock) => String(lock.fence).length === 16)).toBe(
      true,
    );
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    consoleErrors = collectConsoleErrors(page);
    await page.goto(`${baseUrl(app)}/locks`);
    await page.locator('#locks tbody tr[data-key="orders:1042"]').waitFor();
  }, 30_000);

  afterAll(async () => {
    await page?.close();
    await Promise.allSettled(held.map((lock) => lock.release()));
    await web2?.close();
    await app?.close();
  });

  for (const width of [1280, 390]) {
    it(`keeps every holder's label and instance readable beside its whole fence at ${width} px`, async () => {
      await page.setViewportSize({ width, height: 844 });
      await page.locator('#locks tbody tr[data-key="pool:gpu"]').waitFor();
      expect(await overflows(page)).toBe(false);
      const holders = await page.evaluate(shownHolders);
      expect(holders).toHaveLength(10);
      // Exclusive holders show Redis's fence; readers and semaphore permits have none.
      expect(holders.filter((holder) => /^#\d{16}$/.test(holder.fence))).toHaveLength(5);
      // Each fence whole, and at least 12 characters of a label (or all of it) and 8 of an instance.
      const readable = (holder: ShownHolder) => ({
        label: holder.label,
        fenceShown: holder.fence === '' || holder.fenceShown,
        labelReadable: holder.labelChars >= Math.min(12, holder.label.length),
        instanceReadable: holder.instanceChars >= Math.min(8, holder.instance.length),
      });
      expect(holders.map(readable)).toEqual(
        holders.map((holder) => ({
          label: holder.label,
          fenceShown: true,
          labelReadable: true,
          instanceReadable: true,
        })),
      );
      if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}admin-${width < 760 ? 'narrow' : 'page'}.png` });
    });
  }

  for (const width of [1280, 390]) {
    it(`shows a holder's fence whole, on one line, in the detail view at ${width} px`, async () => {
      await page.setViewportSize({ width, height: 844 });
      await page.locator('#locks tbody tr[data-key="reports:nightly"] .key-link').click();
      await page.locator('#detail[open] #detail-holders tbody tr').waitFor();
      const fence = page.locator('#detail-holders tbody td.c-fence');
      expect(await fence.textContent()).toBe(String(held[1].fence));
      // One line box: the digits are not broken across lines, nor cut by the cell.
      expect(
        await fence.evaluate((cell) => {
          const range = (
            cell.ownerDocument as unknown as {
              createRange(): { selectNodeContents(node: unknown): void; getClientRects(): { length: number } };
            }
          ).createRange();
          range.selectNodeContents(cell);
          return { lines: range.getClientRects().length, cut: cell.scrollWidth > cell.clientWidth };
        }),
      ).toEqual({ lines: 1, cut: false });
      expect(await overflows(page)).toBe(false);
      if (SCREENSHOTS && width === 1280) {
        await page.locator('#detail[open] #detail-events li').waitFor();
        await page.locator('#detail').screenshot({ path: `${SCREENSHOTS}admin-detail.png` });
      }
      await page.click('#detail-close');
    });
  }

  it('logged no console error', () => {
    expect(consoleErrors).toEqual([]);
  });
});
