import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import type { Browser, Page } from 'playwright-core';
import {
  DistributedLockAdminModule,
  DistributedLockModule,
  getLockServiceToken,
  LockEngine,
  LockService,
  MemoryBackend,
  type Lock,
} from '../../lib/index.js';
import { baseUrl, PLATFORMS, startHttpApp } from '../nest/http-platform.js';
import {
  collectConsoleErrors,
  launchChromium,
  overflows,
  seriousA11yViolations,
  startSubPathProxy,
} from './browser-kit.js';

const LONG_KEY = `tenant:${'a1b2c3d4e5'.repeat(499)}:z`.slice(0, 5_000);
const LONG_LABEL = 'x'.repeat(96);
const allow = { canActivate: () => true };

/**
 * Runs in the page, in one go (the list may be redrawn between two calls): whether the row of `key`
 * shows its key and its holder's label on one line each, cut with an ellipsis.
 */
function rowIsCut(key: string): { key: boolean; label: boolean } {
  type Element = {
    scrollWidth: number;
    clientWidth: number;
    getAttribute(name: string): string | null;
    querySelector(selector: string): Element | null;
  };
  const page = globalThis as unknown as {
    document: { querySelectorAll(selector: string): Iterable<Element> };
    getComputedStyle(node: Element): { textOverflow: string; whiteSpace: string };
  };
  const cut = (element: Element | null | undefined) => {
    if (!element) return false;
    const style = page.getComputedStyle(element);
    return (
      style.textOverflow === 'ellipsis' && style.whiteSpace === 'nowrap' && element.scrollWidth > element.clientWidth
    );
  };
  const link = [...page.document.querySelectorAll('#locks tbody .key-link')].find(
    (element) => element.getAttribute('title') === key,
  );
  const row = [...page.document.querySelectorAll('#locks tbody tr')].find(
    (tr) => tr.querySelector('.key-link') === link,
  );
  return { key: cut(link), label: cut(row?.querySelector('td.c-holders .label')) };
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
}, 30_000);
afterAll(() => browser?.close());

describe('the admin page layout: long values, narrow screens, accessibility', () => {
  let app: INestApplication;
  let locks: LockService;
  let web2: LockEngine;
  let page: Page;
  let consoleErrors: string[];
  const held: Lock[] = [];

  beforeAll(async () => {
    const shared = new MemoryBackend();
    app = await startHttpApp('express', {
      imports: [
        DistributedLockModule.forRoot({ backend: shared, instance: 'billing-api-1' }),
        DistributedLockModule.forRoot({ name: 'critical', backend: { type: 'memory' }, instance: 'billing-api-1' }),
        DistributedLockAdminModule.register({ guards: [allow], releaseGuards: [allow] }),
      ],
    });
    locks = app.get(LockService);
    held.push(
      await app
        .get<LockService>(getLockServiceToken('critical'))
        .acquire('payments:settlement', { label: 'daily settlement' }),
    );
    web2 = new LockEngine(shared, { instance: 'billing-api-2' });
    held.push(await web2.acquire(LONG_KEY, { label: LONG_LABEL }));
    held.push(await web2.acquire('orders:1042', { label: 'shipping order 1042 for ACME' }));
    held.push(await locks.acquire('reports:nightly', { label: 'nightly report 2026-11-26' }));
    held.push(await locks.acquire('catalog:prices', { mode: 'read', label: 'price export' }));
    held.push(await web2.acquire('catalog:prices', { mode: 'read', label: 'search reindex' }));
    for (const engine of [locks, locks, web2])
      held.push(await engine.acquire('pool:gpu', { permits: 3, label: 'render job' }));
    // Some waiting and a timeout on this instance, for the hot keys panel.
    const busy = await web2.acquire('invoices:2026-11', { label: 'monthly invoices' });
    const waited = locks.acquire('invoices:2026-11', { label: 'invoice retry', waitMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 300)); // the wait being measured, not an event stood in for
    await busy.release();
    held.push(await waited);
    await expect(locks.acquire('orders:1042', { waitMs: 200 })).rejects.toThrow();
    held.push(await locks.acquire('emails:digest', { label: 'daily digest' }));
    const queued = web2.acquire('reports:nightly', { label: 'report retry', waitMs: 60_000 });
    queued.then(
      (lock) => lock.release(),
      () => undefined,
    ); // granted when the test releases its holder
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    consoleErrors = collectConsoleErrors(page);
    await page.goto(`${baseUrl(app)}/locks`);
    await page.locator('#locks tbody tr[data-key="orders:1042"]').waitFor();
    await page.locator('#hot-keys li', { hasText: 'orders:1042' }).waitFor();
  }, 30_000);

  afterAll(async () => {
    await page?.close();
    await Promise.allSettled(held.map((lock) => lock.release()));
    await web2?.close();
    await app?.close();
  });

  const longRow = () => page.locator('#locks tbody tr').filter({ has: page.locator(`[title="${LONG_KEY}"]`) });

  for (const width of [1280, 390]) {
    it(`never gets wider than the window at ${width} px, with a 5,000-character key and a 96-character label`, async () => {
      await page.setViewportSize({ width, height: 844 });
      await longRow().waitFor();
      expect(await overflows(page)).toBe(false);
      const box = await longRow().boundingBox();
      expect(box!.height).toBeLessThan(width < 760 ? 400 : 120);
      expect(box!.width).toBeLessThanOrEqual(width);
      // The key is cut with an ellipsis (its whole value in the title), and so is the label.
      const keyLink = longRow().locator('.key-link');
      expect(await keyLink.getAttribute('title')).toBe(LONG_KEY);
      expect(await page.evaluate(rowIsCut, LONG_KEY)).toEqual({ key: true, label: true });
      expect(await longRow().locator('td.c-holders li').getAttribute('title')).toContain(LONG_LABEL);
      // The whole key is one click away, in the detail view, which does not widen the page either.
      await longRow().locator('.key-link').click();
      await page.locator('#detail[open] #detail-holders tbody tr').waitFor();
      expect(await page.textContent('#detail-key')).toBe(LONG_KEY);
      expect(await page.textContent('#detail-holders')).toContain(LONG_LABEL);
      expect(await overflows(page)).toBe(false);
      const dialog = await page.locator('#detail').boundingBox();
      expect(dialog!.x).toBeGreaterThanOrEqual(0);
      expect(dialog!.x + dialog!.width).toBeLessThanOrEqual(width);
      await page.click('#detail-close');
    });
  }

  it('states a semaphore release as evicting its permits, and releases nothing on Cancel', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.locator('#locks tbody tr[data-key="pool:gpu"] button.danger').click();
    await page.locator('#release-confirm', { hasText: 'Release: evicts 3 semaphore permits' }).waitFor();
    await page.click('#release-cancel');
    await page.locator('#release').waitFor({ state: 'hidden' });
    expect((await locks.inspect('pool:gpu')).holders).toHaveLength(3);
  });

  it('shows the store chosen in the store selector: its locks and its events', async () => {
    expect(await page.locator('#store option').allTextContents()).toEqual(['default', 'critical']);
    await page.selectOption('#store', 'critical');
    await page.locator('#locks tbody tr[data-key="payments:settlement"]').waitFor();
    expect(await page.locator('#locks tbody tr').count()).toBe(1);
    await page.locator('#events li[data-type=acquired]', { hasText: 'payments:settlement' }).waitFor();
    expect(await page.locator('#events li', { hasText: 'orders:1042' }).count()).toBe(0);
    await page.selectOption('#store', 'default');
    await page.locator('#locks tbody tr[data-key="orders:1042"]').waitFor();
  });

  it('passes axe-core with no serious or critical violation, on the list and on the detail view', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.locator('#locks tbody tr[data-key="catalog:prices"] .key-link').click();
    await page.locator('#detail[open] #detail-holders tbody tr').nth(1).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.click('#detail-close');
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await seriousA11yViolations(page)).toEqual([]);
  });

  it('logged no console error', () => {
    expect(consoleErrors).toEqual([]);
  });
});

describe.each(PLATFORMS)('the read-only admin page behind a reverse-proxy sub-path, on %s', (platform) => {
  it('lists and streams through the proxy with relative URLs; shows no Release button; release answers 404', async () => {
    const app = await startHttpApp(platform, {
      imports: [
        DistributedLockModule.forRoot({ backend: { type: 'memory' }, instance: 'web-1' }),
        DistributedLockAdminModule.register({ path: '/ops/locks', guards: [allow], readOnly: true }),
      ],
    });
    const proxy = await startSubPathProxy(baseUrl(app), '/tools');
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const consoleErrors = collectConsoleErrors(page);
    const locks = app.get(LockService);
    const lock = await locks.acquire('orders:7', { label: 'order 7' });
    try {
      await page.goto(`${proxy.url}/ops/locks`);
      await page.locator('#locks tbody tr[data-key="orders:7"]').waitFor();
      await page.locator('#live.live').waitFor();
      const live = await locks.acquire('orders:8');
      await page.locator('#events li[data-type=acquired]', { hasText: 'orders:8' }).waitFor();
      await live.release();
      expect(await page.locator('#locks button.danger').count()).toBe(0);
      await page.locator('#locks tbody tr[data-key="orders:7"] .key-link').click();
      await page.locator('#detail[open] #detail-holders tbody tr').waitFor();
      expect(await page.isVisible('#detail-release')).toBe(false);
      const post = await page.request.post(`${proxy.url}/ops/locks/api/release`, {
        data: { key: 'orders:7', reason: 'test' },
      });
      expect(post.status()).toBe(404);
      expect(lock.signal.aborted).toBe(false);
      expect(consoleErrors).toEqual([]);
    } finally {
      await page.close();
      await lock.release();
      await proxy.close();
      await app.close();
    }
  });
});
