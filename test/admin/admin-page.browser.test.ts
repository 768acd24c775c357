import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DistributedLockAdminModule, DistributedLockModule, LockService, type Lock } from '../../lib/index.js';

/** Debian's chromium package (scripts/install-servers.sh installs it); never a browser download. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where the screenshot is kept as a test artifact. */
const ARTIFACTS = fileURLToPath(new URL('../../.test-results/', import.meta.url));

/** The little of the DOM the page functions below use. */
interface BrowserElement {
  readonly textContent: string | null;
  querySelector(selector: string): BrowserElement | null;
}
interface BrowserDocument {
  querySelectorAll(selector: string): Iterable<BrowserElement>;
}

/** Release needs the cookie `lock-admin=yes`. */
@Injectable()
class AdminCookieGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const cookie = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers.cookie ?? '';
    return cookie.split(/;\s*/).includes('lock-admin=yes');
  }
}

describe('the admin page in a real browser', () => {
  let app: INestApplication;
  let locks: LockService;
  let browser: Browser;
  let page: Page;
  let base: string;
  const held: Lock[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`Chromium is not installed at ${CHROMIUM}: run \`bash scripts/install-servers.sh\` (or \`apt-get install -y chromium\`), or set CHROMIUM_PATH`);
    }
    const moduleRef = await Test.createTestingModule({
      imports: [
        DistributedLockModule.forRoot({ backend: { type: 'memory' }, instance: 'web-1', leaseMs: 30_000 }),
        DistributedLockAdminModule.register({ path: '/locks', releaseGuards: [AdminCookieGuard] }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    locks = app.get(LockService);
    held.push(await locks.acquire('reports:nightly', { label: 'nightly report <b>2026-11-25</b>' }));
    held.push(await locks.acquire('orders:42', { label: 'shipping order 42', leaseMs: 20_000 }));
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 640 } });
    page.on('dialog', (dialog) => void dialog.accept('stuck after deploy'));
    await page.goto(`${base}/locks`);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.allSettled(held.map((lock) => lock.release()));
    await app?.close();
  });

  const row = (key: string) => page.locator('#locks tbody tr', { has: page.locator('td.key', { hasText: key }) });

  it('lists held locks with holder, label (as text, not HTML) and fence', async () => {
    await row('reports:nightly').waitFor();
    const cells = await row('reports:nightly').locator('td').allTextContents();
    expect(cells.slice(0, 5)).toEqual(['reports:nightly', 'exclusive', 'web-1', 'nightly report <b>2026-11-25</b>', String(held[0]!.fence)]);
    expect(await page.locator('#locks b').count()).toBe(0);
  });

  it('counts the remaining lease down live', async () => {
    const lease = row('orders:42').locator('td.lease');
    const first = await lease.textContent();
    expect(first).toMatch(/^\d+\.\d s$/);
    // Runs in the page (the test's tsconfig has no DOM types, hence the loose `document`).
    await page.waitForFunction((before) => {
      const { document } = globalThis as unknown as { document: BrowserDocument };
      const cells = [...document.querySelectorAll('#locks tbody tr')].find((tr) => tr.querySelector('td.key')?.textContent === 'orders:42');
      const now = cells?.querySelector('td.lease')?.textContent;
      return now != null && now !== before && parseFloat(now) < parseFloat(before!);
    }, first);
  });

  it('shows an acquisition as it happens (server-sent events), and the new lock in the list', async () => {
    await page.locator('#live.live').waitFor();
    held.push(await locks.acquire('jobs:import', { label: 'csv import' }));
    await page.locator('#events li', { hasText: 'jobs:import' }).filter({ has: page.locator('.type', { hasText: /^acquired$/ }) }).waitFor();
    await row('jobs:import').waitFor();
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTIFACTS}admin-page.png`, fullPage: true });
  });

  it('filters by key prefix', async () => {
    await page.fill('#prefix', 'orders:');
    await page.waitForFunction(() => {
      const { document } = globalThis as unknown as { document: BrowserDocument };
      return [...document.querySelectorAll('#locks tbody td.key')].every((td) => td.textContent === '' || td.textContent!.startsWith('orders:'));
    });
    expect(await page.locator('#locks tbody td.key').allTextContents()).toEqual(['orders:42']);
    await page.fill('#prefix', '');
    await row('reports:nightly').waitFor();
  });

  it('refuses release without the guard, and releases with it: the holder loses its lock', async () => {
    await row('reports:nightly').locator('button').click();
    await page.locator('#message.error', { hasText: 'Release refused (403)' }).waitFor();
    expect((await locks.inspect('reports:nightly')).held).toBe(true);
    await page.context().addCookies([{ name: 'lock-admin', value: 'yes', url: base }]);
    await row('reports:nightly').locator('button').click();
    await page.locator('#message', { hasText: 'Released reports:nightly' }).waitFor();
    expect(held[0]!.signal.aborted).toBe(true);
    await page.locator('#events li').filter({ has: page.locator('.type', { hasText: /^force-released$/ }) }).filter({ hasText: 'by web-1 · stuck after deploy' }).waitFor();
    await row('reports:nightly').waitFor({ state: 'detached' });
  });
});
