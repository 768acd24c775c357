import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { filter, firstValueFrom } from 'rxjs';
import type { Browser, Page } from 'playwright-core';
import {
  DistributedLockAdminModule,
  DistributedLockModule,
  LockEngine,
  LockService,
  MemoryBackend,
  type Lock,
  type LockEvent,
} from '../../lib/index.js';
import { baseUrl, PLATFORMS, startHttpApp } from '../nest/http-platform.js';
import { collectConsoleErrors, launchChromium } from './browser-kit.js';

/** Release needs the cookie `lock-admin=yes`. */
@Injectable()
class AdminCookieGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return cookies(context.switchToHttp().getRequest()).includes('lock-admin=yes');
  }
}

function cookies(request: { headers: Record<string, string | undefined> }): string[] {
  return (request.headers.cookie ?? '').split(/;\s*/);
}

/** Who released: the `lock-user` cookie (an app would read its authenticated user). */
const actor = (request: { headers: Record<string, string | undefined> }) =>
  cookies(request)
    .find((cookie) => cookie.startsWith('lock-user='))
    ?.slice('lock-user='.length);

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
}, 30_000);
afterAll(() => browser?.close());

describe.each(PLATFORMS)('the admin page in a real browser, on %s under a global prefix', (platform) => {
  let app: INestApplication;
  let locks: LockService;
  let web2: LockEngine;
  let page: Page;
  let consoleErrors: string[];
  let base: string;
  const held: Lock[] = [];
  let waiter: Promise<Lock>;

  beforeAll(async () => {
    const shared = new MemoryBackend();
    app = await startHttpApp(
      platform,
      {
        imports: [
          DistributedLockModule.forRoot({ backend: shared, instance: 'web-1', leaseMs: 30_000 }),
          DistributedLockAdminModule.register({ path: '/ops/locks', releaseGuards: [AdminCookieGuard], actor }),
        ],
      },
      (created) => created.setGlobalPrefix('api'),
    );
    base = baseUrl(app);
    locks = app.get(LockService);
    web2 = new LockEngine(shared, { instance: 'web-2', leaseMs: 30_000 });
    // Each of the first holds a millisecond older than the next (acquiredAt is in ms), so that the age order is not the key order.
    held.push(await locks.acquire('reports:nightly', { label: 'nightly report <b>2026-11-25</b>' }));
    await nextMillisecond();
    held.push(await web2.acquire('orders:42', { label: 'shipping order 42', leaseMs: 20_000 }));
    await nextMillisecond();
    held.push(await locks.acquire('shared:report', { mode: 'read', label: 'reader a' }));
    held.push(await web2.acquire('shared:report', { mode: 'read', label: 'reader b' }));
    waiter = locks.acquire('shared:report', { mode: 'write', label: 'rebuild', waitMs: 60_000 });
    waiter.catch(() => undefined); // released by the release test; a failure there says why
    await nextMillisecond();
    for (let i = 0; i < 30; i++) held.push(await web2.acquire(`page:${String(i).padStart(2, '0')}`));
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    consoleErrors = collectConsoleErrors(page);
    await page.goto(`${base}/api/ops/locks`);
  }, 30_000);

  afterAll(async () => {
    await page?.close();
    await Promise.allSettled([...held.map((lock) => lock.release()), waiter.then((lock) => lock.release())]);
    await web2?.close();
    await app?.close();
  });

  const row = (key: string) => page.locator(`#locks tbody tr[data-key="${key}"]`);
  const keysShown = () =>
    page
      .locator('#locks tbody tr')
      .evaluateAll((rows) => rows.map((tr) => (tr as unknown as { dataset: { key: string } }).dataset.key));

  it('lists held locks from the prefixed URLs: key, mode, holders (label as text, not HTML), fence, lease counting down, waiting', async () => {
    await page.locator('#live.live').waitFor();
    await row('reports:nightly').waitFor();
    expect(await row('reports:nightly').locator('td.c-holders li').textContent()).toBe(
      `web-1nightly report <b>2026-11-25</b>#${held[0].fence}`,
    );
    expect(await page.locator('#locks b').count()).toBe(0);
    expect(await row('shared:report').locator('td.c-mode').textContent()).toBe('read');
    expect(await row('shared:report').locator('td.c-holders li .label').allTextContents()).toEqual([
      'reader a',
      'reader b',
    ]);
    expect(await row('shared:report').locator('td.c-wait').textContent()).toBe('1');
    const lease = row('orders:42').locator('td.c-lease');
    const first = parseFloat((await lease.textContent())!);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(20);
    await page.waitForFunction(
      ([key, before]) =>
        parseFloat((globalThis as any).document.querySelector(`tr[data-key="${key}"] td.c-lease`).textContent) < before,
      ['orders:42', first] as const,
    );
  });

  it('sorts by key, by waiters and by age (the oldest first)', async () => {
    await page.selectOption('#page-size', '500');
    await row('page:29').waitFor();
    const keys = await keysShown();
    expect(keys).toEqual([...keys].sort());
    await page.click('th[data-sort=key] button');
    expect(await page.getAttribute('th[data-sort=key]', 'aria-sort')).toBe('descending');
    expect(await keysShown()).toEqual([...keys].sort().reverse());
    await page.click('th[data-sort=waiters] button');
    expect((await keysShown())[0]).toBe('shared:report');
    await page.click('th[data-sort=age] button');
    expect(await page.getAttribute('th[data-sort=age]', 'aria-sort')).toBe('descending');
    // The oldest acquisition first (ties by key), as the store reports the holders' acquiredAt.
    const { locks: listed } = await locks.list({ limit: 500 });
    const oldest = (lock: (typeof listed)[number]) => Math.min(...lock.holders.map((holder) => holder.acquiredAt!));
    const expected = [...listed]
      .sort((a, b) => oldest(a) - oldest(b) || (a.key < b.key ? -1 : 1))
      .map((lock) => lock.key);
    expect(expected).not.toEqual([...expected].sort()); // the age order is not the key order
    expect(await keysShown()).toEqual(expected);
    expect(await row('reports:nightly').locator('td.c-age').textContent()).toMatch(/^\d+( ms|(\.\d)? s)$/);
    await page.click('th[data-sort=key] button');
  });

  it('filters by key prefix and pages through list cursors past one page', async () => {
    await page.fill('#filter', 'page:');
    await row('orders:42').waitFor({ state: 'detached' });
    await page.locator('#page-no', { hasText: 'Page 1 · 30 locks' }).waitFor();
    await page.selectOption('#page-size', '25');
    await page.locator('#page-no', { hasText: 'Page 1 · 25 locks' }).waitFor();
    expect(await keysShown()).toEqual(Array.from({ length: 25 }, (_, i) => `page:${String(i).padStart(2, '0')}`));
    await page.click('#next');
    await page.locator('#page-no', { hasText: 'Page 2 · 5 locks · last page' }).waitFor();
    expect(await keysShown()).toEqual(['page:25', 'page:26', 'page:27', 'page:28', 'page:29']);
    expect(await page.isDisabled('#next')).toBe(true);
    await page.click('#prev');
    await page.locator('#page-no', { hasText: 'Page 1 · 25 locks' }).waitFor();
    await page.fill('#filter', 'page:2');
    await page.locator('#page-no', { hasText: 'Page 1 · 10 locks' }).waitFor();
    await page.fill('#filter', '');
    await page.selectOption('#page-size', '100');
    await row('shared:report').waitFor();
  });

  it("opens the detail view of a key: every holder, the waiters, this instance's events of the key, the whole key", async () => {
    await row('shared:report').locator('.key-link').click();
    await page.locator('#detail[open] #detail-holders tbody tr').nth(1).waitFor();
    expect(await page.textContent('#detail-key')).toBe('shared:report');
    const holders = await page
      .locator('#detail-holders tbody tr')
      .evaluateAll((rows) => rows.map((tr) => (tr as unknown as { textContent: string }).textContent));
    expect(holders[0]).toContain('web-1reader a');
    expect(holders[1]).toContain('web-2reader b');
    // The memory store keeps its queue: the waiter is named, with how long it has waited.
    expect(await page.locator('#detail-waiters li').allTextContents()).toEqual([
      expect.stringMatching(/^web-1 · rebuild · waiting \d/),
    ]);
    expect(await page.textContent('#detail-facts')).toContain('Releaseevicts 2 readers');
    // Events of this instance (web-1) only: its reader's acquisition, not web-2's.
    const events = page.locator('#detail-events li[data-type=acquired]');
    expect(await events.count()).toBe(1);
    expect(await events.textContent()).toContain('read');
    await page.click('#detail-close');
    await page.locator('#detail').waitFor({ state: 'hidden' });
  });

  it('shows hot keys (waiting and timeouts) and filters events by type, renewals hidden by default', async () => {
    await expect(locks.acquire('orders:42', { waitMs: 50 })).rejects.toThrow();
    await page.locator('#hot-keys li', { hasText: 'orders:42' }).filter({ hasText: '1 timeout' }).waitFor();
    const renewing = await locks.acquire('renewing:1', { leaseMs: 600 });
    held.push(renewing);
    await page.locator('#events li[data-type=acquired]', { hasText: 'renewing:1' }).waitFor();
    await firstValueFrom(locks.events.pipe(filter((event) => event.type === 'extended' && event.key === 'renewing:1')));
    expect(await page.locator('#events li[data-type=extended]').count()).toBe(0);
    await page.selectOption('#event-type', 'extended');
    await page.locator('#events li[data-type=extended]').first().waitFor();
    expect(await page.locator('#events li:not([data-type=extended])').count()).toBe(0);
    await page.selectOption('#event-type', '');
    await page.locator('#events li[data-type=acquired]').first().waitFor();
    expect(await page.locator('#events li[data-type=extended]').count()).toBe(0);
  });

  it('releases with its scope stated, a reason required, and who released: the event carries the actor and the evicted fences', async () => {
    await row('shared:report').locator('button.danger').click();
    await page.locator('#release-confirm', { hasText: 'Release: evicts 2 readers' }).waitFor();
    expect(await page.textContent('#release-scope')).toContain('web-1 · reader a');
    // Refused without the guard's cookie: the dialog says so and the lock stays held.
    await page.fill('#release-reason', 'stuck after deploy');
    await page.click('#release-confirm');
    await page.locator('#release-error', { hasText: 'Release refused (403' }).waitFor();
    expect((await locks.inspect('shared:report')).holders).toHaveLength(2);
    await page.context().addCookies([
      { name: 'lock-admin', value: 'yes', url: base },
      { name: 'lock-user', value: 'alice', url: base },
    ]);
    // An empty (blank) reason is refused before anything is sent.
    await page.fill('#release-reason', '   ');
    await page.click('#release-confirm');
    await page.locator('#release-error', { hasText: 'Give a reason' }).waitFor();
    expect((await locks.inspect('shared:report')).holders).toHaveLength(2);
    const event = firstValueFrom(
      locks.events.pipe(
        filter((e): e is Extract<LockEvent, { type: 'force-released' }> => e.type === 'force-released'),
      ),
    );
    await page.fill('#release-reason', 'stuck after deploy');
    await page.click('#release-confirm');
    await page.locator('#message', { hasText: 'Released shared:report' }).waitFor();
    const readers = [held[2], held[3]];
    expect(readers.every((reader) => typeof reader.fence === 'number')).toBe(true);
    expect(await event).toMatchObject({
      key: 'shared:report',
      by: 'web-1',
      actor: 'alice',
      reason: 'stuck after deploy',
    });
    expect((await event).evicted).toEqual(
      [
        { instance: 'web-1', label: 'reader a', fence: readers[0].fence },
        { instance: 'web-2', label: 'reader b', fence: readers[1].fence },
      ].map((holder) => expect.objectContaining(holder)),
    );
    expect(held[2].signal.aborted).toBe(true);
    await page
      .locator('#events li[data-type=force-released]')
      .filter({ hasText: 'by alice on web-1 · stuck after deploy' })
      .waitFor();
    // The waiter got it: the row now shows the writer.
    await row('shared:report').locator('td.c-holders li .label', { hasText: 'rebuild' }).waitFor();
  });

  it('logged no console error (the one expected: the refused release, 403)', () => {
    expect(consoleErrors.filter((error) => !error.includes('status of 403'))).toEqual([]);
    expect(consoleErrors.filter((error) => error.includes('status of 403'))).toHaveLength(1);
  });
});

/** Resolves once the wall clock has moved to the next millisecond. */
async function nextMillisecond(): Promise<void> {
  const now = Date.now();
  while (Date.now() === now) await new Promise((resolve) => setImmediate(resolve));
}
