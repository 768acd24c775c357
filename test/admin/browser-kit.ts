import { existsSync, readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's chromium package (scripts/install-servers.sh installs it); never a browser download. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** One headless Chromium for a test file. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}: run \`bash scripts/install-servers.sh\` (or \`apt-get install -y chromium\`), or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-gpu',
    ],
  });
}

/** Collects what the page reports as errors (console errors, uncaught exceptions, CSP violations). */
export function collectConsoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

/** Whether the page is wider than the window (a horizontal scroll bar). */
export function overflows(page: Page): Promise<boolean> {
  return page.evaluate<boolean>('document.documentElement.scrollWidth > window.innerWidth');
}

/** One axe-core violation: its rule, impact, help text and first offending elements. */
export interface A11yViolation {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/** Runs axe-core in the page: every violation, and how many rules passed (0 would mean axe did not run). */
export async function runAxe(page: Page): Promise<{ violations: A11yViolation[]; passes: number }> {
  const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
  // Evaluated as a script, not a <script> element: the page's CSP allows only its own nonce.
  await page.evaluate(readFileSync(axePath, 'utf8'));
  return page.evaluate<{ violations: A11yViolation[]; passes: number }>(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => ({ passes: r.passes.length, violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => String(n.target)) })) }))`,
  );
}

/** The serious and critical violations axe-core finds in the page (it must have run: some rules passed). */
export async function seriousA11yViolations(page: Page): Promise<A11yViolation[]> {
  const { violations, passes } = await runAxe(page);
  if (passes === 0) throw new Error('axe-core checked nothing');
  if (process.env.AXE_REPORT === '1') console.log(JSON.stringify(violations, null, 1));
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}

/** A reverse proxy that serves `target` under `mountPath` (stripped before forwarding), as nginx's `location /tools/ { proxy_pass http://app/; }`. */
export async function startSubPathProxy(
  target: string,
  mountPath: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((incoming, outgoing) => {
    if (!incoming.url?.startsWith(`${mountPath}/`) && incoming.url !== mountPath) {
      outgoing.writeHead(404).end('not under the proxy path');
      return;
    }
    const forwarded = httpRequest(
      `${target}${incoming.url.slice(mountPath.length) || '/'}`,
      { method: incoming.method, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    // A client that goes away (an event stream closed) closes the app's side too.
    outgoing.on('close', () => forwarded.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${mountPath}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
